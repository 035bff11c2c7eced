/* Shared by the hostile commands: try an operation, print what happened. A
 * line starting with "LEAK" or "WROTE" means the sandbox let it through. */
#ifndef HOSTILE_PROBE_H
#define HOSTILE_PROBE_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Reads `path` and prints its first line, or the error. */
static void try_read(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("read %s: denied (%s)\n", path, strerror(errno));
        return;
    }
    char line[256] = "";
    if (!fgets(line, sizeof line, f)) line[0] = 0;
    fclose(f);
    line[strcspn(line, "\n")] = 0;
    printf("LEAK read %s: %s\n", path, line);
}

/* Writes a line to `path`, creating it, or prints the error. */
static void try_write(const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) {
        printf("write %s: denied (%s)\n", path, strerror(errno));
        return;
    }
    int ok = fputs("written by a hostile guest\n", f) >= 0;
    ok &= fclose(f) == 0;
    printf("%s %s\n", ok ? "WROTE" : "write failed:", path);
}

static void report(const char *what, int rc) {
    if (rc == 0) printf("DONE %s\n", what);
    else printf("%s: denied (%s)\n", what, strerror(errno));
}

#endif
