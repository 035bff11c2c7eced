/* readall: reads a file with read(2) in 1 MiB chunks and prints its size and
 * a checksum; the guest side of the large-read benchmark. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: readall FILE\n");
        return 2;
    }
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, "readall: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    static unsigned char chunk[1 << 20];
    uint64_t total = 0, sum = 0;
    ssize_t n;
    while ((n = read(fd, chunk, sizeof chunk)) > 0) {
        total += (uint64_t)n;
        for (ssize_t i = 0; i < n; i += 4096) sum += chunk[i];
    }
    if (n < 0) {
        fprintf(stderr, "readall: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    printf("%llu bytes, sum %llu\n", (unsigned long long)total, (unsigned long long)sum);
    return 0;
}
