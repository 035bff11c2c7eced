/* wc: a command that counts lines, words and bytes of its arguments (or stdin). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "count.h"

static int count(FILE *f, const char *name) {
    counts_t c = {0};
    int failed = count_stream(f, &c);
    printf("%7ld %7ld %7ld %s\n", c.lines, c.words, c.bytes, name);
    return failed ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc < 2) return count(stdin, "");
    int status = 0;
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            fprintf(stderr, "wc: %s: %s\n", argv[i], strerror(errno));
            status = 1;
            continue;
        }
        status |= count(f, argv[i]);
        fclose(f);
    }
    return status;
}
