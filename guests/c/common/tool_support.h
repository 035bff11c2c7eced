/* Glue between C tools and the warden:tool world that every C tool shares:
 * describing tools, returning results and mapping errno to tool errors. */
#ifndef WARDEN_TOOL_SUPPORT_H
#define WARDEN_TOOL_SUPPORT_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wasi/libc-find-relpath.h>

#include "tool.h"

typedef struct {
    const char *name, *description, *input_schema;
} tool_spec_t;

/* Fills `ret` from a table of tool specs. */
static void describe_tools(tool_list_tool_info_t *ret, const tool_spec_t *specs, size_t n) {
    ret->ptr = calloc(n, sizeof(tool_tool_info_t));
    ret->len = n;
    for (size_t i = 0; i < n; i++) {
        tool_string_dup(&ret->ptr[i].name, specs[i].name);
        tool_string_dup(&ret->ptr[i].description, specs[i].description);
        tool_string_dup(&ret->ptr[i].input_schema, specs[i].input_schema);
    }
}

/* A NUL-terminated copy of a WIT string argument, which the callee owns. */
static char *take_string(tool_string_t *s) {
    char *out = malloc(s->len + 1);
    memcpy(out, s->ptr, s->len);
    out[s->len] = 0;
    tool_string_free(s);
    return out;
}

static bool tool_fail(tool_tool_error_t *err, uint8_t tag, const char *message) {
    err->tag = tag;
    tool_string_dup(&err->val.failed, message);
    return false;
}

/* wasi-libc says ENOENT for a path under no mount: that is a refusal too. */
static bool outside_mounts(const char *path) {
    const char *prefix, *inside;
    return path[0] == '/' && __wasilibc_find_abspath(path, &prefix, &inside) == -1;
}

/* A failed file access: refusals by the sandbox are `denied`, the rest `failed`. */
static bool tool_errno(tool_tool_error_t *err, const char *what, const char *path) {
    int e = errno;
    /* A refusal names only the path: Warden puts the sandbox's own words in its place. */
    if (e == EACCES || e == EPERM || e == EROFS || e == ENOTCAPABLE || e == EFBIG || (e == ENOENT && outside_mounts(path)))
        return tool_fail(err, TOOL_TOOL_ERROR_DENIED, path);
    char message[512];
    snprintf(message, sizeof message, "cannot %s %s: %s", what, path, strerror(e));
    return tool_fail(err, TOOL_TOOL_ERROR_FAILED, message);
}

static void host_log(warden_tool_host_level_t level, const char *message) {
    tool_string_t s;
    tool_string_set(&s, message);
    warden_tool_host_log(level, &s);
}

#endif
