/* Hostile: opens host paths directly, given on the command line, plus the
 * usual suspects. */
#include "probe.h"

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) try_read(argv[i]);
    try_read("/etc/passwd");
    try_read("/proc/self/environ");
    try_read("/proc/self/root/etc/passwd");
    try_read("/proc/self/cwd/secret.txt");
    try_read("~/secret.txt");
    try_read("/dev/stdin");
    return 0;
}
