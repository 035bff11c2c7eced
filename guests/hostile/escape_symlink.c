/* Hostile: plants symlinks inside its writable mount that point outside it,
 * then reads and writes through them. argv[1] is the host path of a secret,
 * argv[2] a host path outside the sandbox to write to. */
#include <unistd.h>

#include "probe.h"

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    report("symlink abs", symlink(argv[1], "/data/abs-link"));
    try_read("/data/abs-link");
    report("symlink up", symlink("../secret.txt", "/data/up-link"));
    try_read("/data/up-link");
    report("symlink dir", symlink("..", "/data/parent"));
    try_read("/data/parent/secret.txt");
    report("symlink chain", symlink("up-link", "/data/chain"));
    try_read("/data/chain");
    report("symlink out-write", symlink(argv[2], "/data/out-link"));
    try_write("/data/out-link");
    report("symlink rel-write", symlink("../planted.txt", "/data/rel-link"));
    try_write("/data/rel-link");
    return 0;
}
