/* Hostile: works below libc's preopen table. It renumbers the preopen onto
 * another descriptor number and tries `..` from every descriptor number it can
 * name, raw preview1 calls only. */
#include <stdio.h>
#include <wasi/api.h>

static void try_open(__wasi_fd_t dir, const char *path) {
    __wasi_fd_t fd;
    __wasi_errno_t e = __wasi_path_open(dir, 0, path, 0, __WASI_RIGHTS_FD_READ, 0, 0, &fd);
    if (e != 0) return;
    char buf[128] = "";
    __wasi_iovec_t iov = {(uint8_t *)buf, sizeof buf - 1};
    __wasi_size_t n = 0;
    if (__wasi_fd_read(fd, &iov, 1, &n) == 0 && n > 0) {
        buf[n] = 0;
        printf("LEAK fd %u %s: %s\n", dir, path, buf);
    }
    (void)__wasi_fd_close(fd);
}

int main(void) {
    /* preview1 renumbers onto an open descriptor only: open one first. */
    __wasi_fd_t file;
    if (__wasi_path_open(3, 0, "inside.txt", 0, __WASI_RIGHTS_FD_READ, 0, 0, &file) != 0) return 1;
    printf("renumber 3->%u: %d\n", file, __wasi_fd_renumber(3, file));
    printf("renumber 3->0: %d\n", __wasi_fd_renumber(3, 0));
    for (__wasi_fd_t dir = 0; dir < 64; dir++) {
        try_open(dir, "../secret.txt");
        try_open(dir, "../../secret.txt");
        try_open(dir, "inside.txt");
    }
    printf("done\n");
    return 0;
}
