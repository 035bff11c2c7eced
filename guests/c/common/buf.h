/* A growing byte buffer, for building tool output. */
#ifndef WARDEN_BUF_H
#define WARDEN_BUF_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *data;
    size_t len, cap;
} buf_t;

static void buf_reserve(buf_t *b, size_t extra) {
    if (b->len + extra + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) cap *= 2;
    b->data = realloc(b->data, cap);
    if (!b->data) abort();
    b->cap = cap;
}

static void buf_put(buf_t *b, const char *s, size_t n) {
    buf_reserve(b, n);
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

static void buf_puts(buf_t *b, const char *s) { buf_put(b, s, strlen(s)); }

static void buf_printf(buf_t *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    buf_reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* Appends `s` as a JSON string literal, quotes included. */
static void buf_json_string(buf_t *b, const char *s) {
    buf_puts(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') buf_printf(b, "\\%c", c);
        else if (c == '\n') buf_puts(b, "\\n");
        else if (c < 0x20) buf_printf(b, "\\u%04x", c);
        else buf_put(b, (const char *)&c, 1);
    }
    buf_puts(b, "\"");
}

#endif
