/* Hostile: tries every way of changing a read-only mount. */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe.h"

int main(void) {
    try_write("/ro/existing.md");
    try_write("/ro/new.md");
    report("mkdir /ro/newdir", mkdir("/ro/newdir", 0755));
    report("unlink /ro/existing.md", unlink("/ro/existing.md"));
    report("rename /ro -> /rw", rename("/ro/existing.md", "/rw/stolen.md"));
    report("rename /rw -> /ro", rename("/rw/mine.md", "/ro/mine.md"));
    report("truncate /ro/existing.md", truncate("/ro/existing.md", 0));
    report("symlink in /ro", symlink("existing.md", "/ro/link.md"));
    report("link into /ro", link("/rw/mine.md", "/ro/hard.md"));
    int fd = open("/ro/existing.md", O_RDWR);
    report("open O_RDWR /ro/existing.md", fd < 0 ? -1 : 0);
    fd = open("/ro/existing.md", O_WRONLY | O_APPEND);
    report("open O_APPEND /ro/existing.md", fd < 0 ? -1 : 0);
    try_write("/rw/allowed.md"); /* the control: this one is allowed */
    return 0;
}
