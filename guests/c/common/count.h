/* Lines, words and bytes of a stream, as wc counts them. */
#ifndef WARDEN_COUNT_H
#define WARDEN_COUNT_H

#include <ctype.h>
#include <stdio.h>

typedef struct {
    long lines, words, bytes;
} counts_t;

/* Adds the counts of `f` to `c`; 0, or -1 after a read error. */
static int count_stream(FILE *f, counts_t *c) {
    int ch, in_word = 0;
    while ((ch = getc(f)) != EOF) {
        c->bytes++;
        if (ch == '\n') c->lines++;
        if (isspace(ch)) in_word = 0;
        else if (!in_word) in_word = 1, c->words++;
    }
    return ferror(f) ? -1 : 0;
}

#endif
