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

/* A newly allocated copy of the string value of "key" (escapes decoded), or NULL. */
static char *json_string(const char *json, const char *key) {
    const char *v = json_find(json, key);
    if (!v || *v != '"') return NULL;
    char *out = malloc(strlen(v) + 1), *o = out;
    for (v++; *v && *v != '"'; v++) {
        if (*v == '\\' && v[1]) {
            v++;
            switch (*v) {
            case 'n': *o++ = '\n'; break;
            case 't': *o++ = '\t'; break;
            case 'r': *o++ = '\r'; break;
            default: *o++ = *v; break;
            }
        } else {
            *o++ = *v;
        }
    }
    *o = 0;
    return out;
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
