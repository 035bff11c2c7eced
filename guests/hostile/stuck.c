/* Hostile: a tool that never answers (spin), crashes (trap), takes all the
 * memory it can (hog), writes to stdout for ever (chatter) or is refused a
 * hundred times and then crashes (sneak), for the limits, cancellation and
 * audit of a host that serves tools to others, which must go on serving. */
#include <stdint.h>
#include <stdio.h>

#include "tool_support.h"

void exports_tool_describe(tool_list_tool_info_t *ret) {
    static const tool_spec_t spec[] = {
        {"spin", "Loop for ever.", "{\"type\":\"object\"}"},
        {"trap", "Crash (an unreachable instruction).", "{\"type\":\"object\"}"},
        {"hog", "Allocate memory until none is left.", "{\"type\":\"object\"}"},
        {"chatter", "Write to stdout for ever.", "{\"type\":\"object\"}"},
        {"sneak", "Try 100 files outside /portfolio, then crash.", "{\"type\":\"object\"}"},
    };
    describe_tools(ret, spec, 5);
}

bool exports_tool_call(tool_string_t *name, tool_string_t *input, tool_string_t *ret, tool_tool_error_t *err) {
    char *tool = take_string(name);
    tool_string_free(input);
    if (strcmp(tool, "spin") == 0) {
        volatile uint64_t n = 0;
        for (;;) n++;
    }
    if (strcmp(tool, "trap") == 0) __builtin_trap();
    if (strcmp(tool, "hog") == 0) {
        /* Chained, so that the compiler cannot drop the allocations. */
        static void *volatile last;
        for (;;) {
            void **p = malloc(1 << 20);
            if (!p) break;
            *p = last;
            last = p;
        }
    }
    if (strcmp(tool, "chatter") == 0) {
        for (;;) {
            fputs("chatter\n", stdout);
            fflush(stdout);
        }
    }
    if (strcmp(tool, "sneak") == 0) {
        /* Refused each time; the crash must not keep the attempts out of the audit log. */
        char path[64];
        for (int i = 0; i < 100; i++) {
            snprintf(path, sizeof path, "/portfolio/../outside-%d.md", i);
            FILE *f = fopen(path, "r");
            if (f) fclose(f);
        }
        __builtin_trap();
    }
    tool_string_dup(ret, "unexpected");
    (void)err;
    return true;
}
