/* Hostile: goes after files whose suffix the mount does not allow (only .md
 * is), directly and through names it makes up. */
#include <dirent.h>
#include <unistd.h>

#include "probe.h"

int main(void) {
    try_read("/data/notes.md"); /* the control: this one is allowed */
    try_read("/data/.env");
    try_read("/data/secret.key");
    try_read("/data/planted-link.md"); /* the host planted: planted-link.md -> .env */
    report("symlink alias.md -> .env", symlink(".env", "/data/alias.md"));
    try_read("/data/alias.md");
    report("link .env -> hard.md", link("/data/.env", "/data/hard.md"));
    try_read("/data/hard.md");
    report("rename notes.md -> notes.sh", rename("/data/notes.md", "/data/notes.sh"));
    try_write("/data/run.sh");
    DIR *d = opendir("/data");
    struct dirent *e;
    while (d && (e = readdir(d))) printf("listed %s\n", e->d_name);
    if (d) closedir(d);
    return 0;
}
