/* Hostile: climbs out of /data with `..` in every spelling it knows. */
#include "probe.h"

int main(void) {
    try_read("/data/inside.txt"); /* the control: this one is allowed */
    try_read("/data/../secret.txt");
    try_read("/data/sub/../../secret.txt");
    try_read("/data/../../../../../../../../secret.txt");
    try_read("../secret.txt");
    try_read("/data/./../secret.txt");
    try_read("/data/..//secret.txt");
    try_read("/../secret.txt");
    try_write("/data/../planted.txt");
    return 0;
}
