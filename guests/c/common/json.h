/* Just enough JSON for tool inputs: the string, number or boolean value of a
 * top-level key in a flat object. Values are looked up, not validated; the host
 * has checked that the input is JSON. */
#ifndef WARDEN_JSON_H
#define WARDEN_JSON_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Points at the value of "key" in `json`, or NULL. */
static const char *json_find(const char *json, const char *key) {
    size_t klen = strlen(key);
    for (const char *p = json; (p = strchr(p, '"')); p++) {
        if (strncmp(p + 1, key, klen) == 0 && p[klen + 1] == '"') {
            const char *q = p + klen + 2;
            while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r') q++;
            if (*q != ':') continue;
            q++;
            while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r') q++;
            return q;
        }
        /* skip the rest of this string */
        for (p++; *p && *p != '"'; p++)
            if (*p == '\\' && p[1]) p++;
        if (!*p) break;
    }
    return NULL;
}

/* Whether "key" is given a value other than null: with json_string's NULL,
 * tells a field left out from one that cannot be used. */
static bool json_has(const char *json, const char *key) {
    const char *v = json_find(json, key);
    return v && strncmp(v, "null", 4) != 0;
}

/* The four hex digits at `p` as a number, or -1. */
static long json_hex4(const char *p) {
    long n = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return -1;
        n = n * 16 + d;
    }
    return n;
}

/* Writes code point `c` as UTF-8 at `o`; returns the byte after it. */
static char *json_utf8(char *o, long c) {
    if (c < 0x80) {
        *o++ = (char)c;
    } else if (c < 0x800) {
        *o++ = (char)(0xC0 | (c >> 6));
        *o++ = (char)(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        *o++ = (char)(0xE0 | (c >> 12));
        *o++ = (char)(0x80 | ((c >> 6) & 0x3F));
        *o++ = (char)(0x80 | (c & 0x3F));
    } else {
        *o++ = (char)(0xF0 | (c >> 18));
        *o++ = (char)(0x80 | ((c >> 12) & 0x3F));
        *o++ = (char)(0x80 | ((c >> 6) & 0x3F));
        *o++ = (char)(0x80 | (c & 0x3F));
    }
    return o;
}

/* A newly allocated copy of the string value of "key" (escapes decoded, \uXXXX
 * as UTF-8), or NULL. A value holding \u0000 is NULL too: in C it would end
 * the string early, so "/a.md\u0000.txt" would silently become "/a.md". */
static char *json_string(const char *json, const char *key) {
    const char *v = json_find(json, key);
    if (!v || *v != '"') return NULL;
    /* UTF-8 of an escape is never longer than the escape itself. */
    char *out = malloc(strlen(v) + 1), *o = out;
    for (v++; *v && *v != '"'; v++) {
        if (*v == '\\' && v[1]) {
            v++;
            switch (*v) {
            case 'n': *o++ = '\n'; break;
            case 't': *o++ = '\t'; break;
            case 'r': *o++ = '\r'; break;
            case 'b': *o++ = '\b'; break;
            case 'f': *o++ = '\f'; break;
            case 'u': {
                long c = json_hex4(v + 1);
                if (c < 0) goto bad;
                v += 4;
                if (c >= 0xD800 && c <= 0xDBFF && v[1] == '\\' && v[2] == 'u') {
                    long low = json_hex4(v + 3);
                    if (low >= 0xDC00 && low <= 0xDFFF) {
                        c = 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00);
                        v += 6;
                    }
                }
                if (c == 0 || (c >= 0xD800 && c <= 0xDFFF)) goto bad;
                o = json_utf8(o, c);
                break;
            }
            default: *o++ = *v; break;
            }
        } else {
            *o++ = *v;
        }
    }
    *o = 0;
    return out;
bad:
    free(out);
    return NULL;
}

static long json_number(const char *json, const char *key, long fallback) {
    const char *v = json_find(json, key);
    return (v && (*v == '-' || (*v >= '0' && *v <= '9'))) ? strtol(v, NULL, 10) : fallback;
}

static bool json_bool(const char *json, const char *key, bool fallback) {
    const char *v = json_find(json, key);
    if (v && strncmp(v, "true", 4) == 0) return true;
    if (v && strncmp(v, "false", 5) == 0) return false;
    return fallback;
}

#endif
