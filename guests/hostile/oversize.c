/* Hostile: reads and writes past the mount's max_file_bytes (1000 here). */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "probe.h"

int main(void) {
    try_read("/data/small.md"); /* the control: this one is allowed */
    try_read("/data/big.md");
    char *block = malloc(4000);
    memset(block, 'x', 4000);
    int fd = open("/data/grow.md", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ssize_t n = write(fd, block, 4000);
    printf("write 4000 bytes: %s\n", n == 4000 ? "WROTE" : strerror(errno));
    n = pwrite(fd, block, 10, 995);
    printf("pwrite at 995: %s\n", n == 10 ? "WROTE" : strerror(errno));
    report("ftruncate to 5000", ftruncate(fd, 5000));
    close(fd);
    fd = open("/data/grow.md", O_WRONLY | O_APPEND);
    for (int i = 0; i < 20; i++) write(fd, block, 100);
    close(fd);
    return 0;
}
