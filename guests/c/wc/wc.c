/* wc: a command that counts lines, words and bytes of its arguments (or stdin). */
#include <ctype.h>
#include <stdio.h>
#include <errno.h>
#include <string.h>

static int count(FILE *f, const char *name) {
    long lines = 0, words = 0, bytes = 0;
    int ch, in_word = 0;
    while ((ch = getc(f)) != EOF) {
        bytes++;
        if (ch == '\n') lines++;
        if (isspace(ch)) in_word = 0;
        else if (!in_word) in_word = 1, words++;
    }
    printf("%7ld %7ld %7ld %s\n", lines, words, bytes, name);
    return ferror(f) ? 1 : 0;
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
