/* textkit: three small text tools over the sandbox's files.
 *   grep   - fixed-string search in a file or below a folder
 *   count  - lines, words and bytes of a file
 *   report - a Markdown report of the counts of every file below a folder */
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>

#include "buf.h"
#include "count.h"
#include "json.h"
#include "tool_support.h"

static const tool_spec_t TOOLS[] = {
    {"grep", "Find lines containing a fixed string in a file, or in every file below a folder.",
     "{\"type\":\"object\",\"required\":[\"pattern\",\"path\"],\"properties\":{"
     "\"pattern\":{\"type\":\"string\"},\"path\":{\"type\":\"string\"},"
     "\"ignore_case\":{\"type\":\"boolean\"},\"max_matches\":{\"type\":\"integer\",\"minimum\":1}}}"},
    {"count", "Count the lines, words and bytes of a file.",
     "{\"type\":\"object\",\"required\":[\"path\"],\"properties\":{\"path\":{\"type\":\"string\"}}}"},
    {"report", "Write a Markdown report of line and word counts of every file below a folder.",
     "{\"type\":\"object\",\"required\":[\"source\",\"output\"],\"properties\":{"
     "\"source\":{\"type\":\"string\"},\"output\":{\"type\":\"string\"}}}"},
};

void exports_tool_describe(tool_list_tool_info_t *ret) {
    describe_tools(ret, TOOLS, sizeof TOOLS / sizeof TOOLS[0]);
}

static int count_file(const char *path, counts_t *c) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    int failed = count_stream(f, c);
    fclose(f);
    return failed;
}

static const char *find(const char *line, const char *pattern, int ignore_case) {
    if (!ignore_case) return strstr(line, pattern);
    size_t n = strlen(pattern);
    for (; *line; line++)
        if (strncasecmp(line, pattern, n) == 0) return line;
    return NULL;
}

typedef struct {
    const char *pattern;
    int ignore_case;
    long max, found;
    buf_t out;
} grep_t;

static int grep_file(grep_t *g, const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    char line[4096];
    long number = 0;
    while (g->found < g->max && fgets(line, sizeof line, f)) {
        number++;
        if (find(line, g->pattern, g->ignore_case)) {
            line[strcspn(line, "\n")] = 0;
            buf_printf(&g->out, "%s:%ld: %s\n", path, number, line);
            g->found++;
        }
    }
    fclose(f);
    return 0;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Calls `visit` on every regular file at or below `path`, in sorted order.
 * (Not scandir: with the preview1 adapter, scandir stats `..` of a preopen,
 * which the sandbox refuses.) */
static int walk(const char *path, int (*visit)(void *, const char *), void *ctx) {
    struct stat st;
    if (stat(path, &st) != 0) return -1;
    if (!S_ISDIR(st.st_mode)) return visit(ctx, path);
    DIR *dir = opendir(path);
    if (!dir) return -1;
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(dir));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        names = realloc(names, (n + 1) * sizeof *names);
        names[n++] = strdup(e->d_name);
    }
    closedir(dir);
    qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        char child[4096];
        snprintf(child, sizeof child, "%s/%s", strcmp(path, "/") ? path : "", names[i]);
        walk(child, visit, ctx);
        free(names[i]);
    }
    free(names);
    return 0;
}

static int grep_visit(void *ctx, const char *path) {
    grep_t *g = ctx;
    if (grep_file(g, path) != 0) host_log(WARDEN_TOOL_HOST_LEVEL_WARN, path);
    return 0;
}

static bool run_grep(const char *input, tool_string_t *ret, tool_tool_error_t *err) {
    grep_t g = {json_string(input, "pattern"), json_bool(input, "ignore_case", false),
                json_number(input, "max_matches", 1000), 0, {0}};
    char *path = json_string(input, "path");
    if (!g.pattern || !*g.pattern || !path)
        return tool_fail(err, TOOL_TOOL_ERROR_INVALID_INPUT, "give a non-empty \"pattern\" and a \"path\"");
    if (walk(path, grep_visit, &g) != 0) return tool_errno(err, "search", path);
    buf_printf(&g.out, "%ld match%s\n", g.found, g.found == 1 ? "" : "es");
    tool_string_dup(ret, g.out.data);
    return true;
}

static bool run_count(const char *input, tool_string_t *ret, tool_tool_error_t *err) {
    char *path = json_string(input, "path");
    if (!path) return tool_fail(err, TOOL_TOOL_ERROR_INVALID_INPUT, "give a \"path\"");
    counts_t c = {0};
    if (count_file(path, &c) != 0) return tool_errno(err, "read", path);
    buf_t out = {0};
    buf_printf(&out, "{\"path\":");
    buf_json_string(&out, path);
    buf_printf(&out, ",\"lines\":%ld,\"words\":%ld,\"bytes\":%ld}", c.lines, c.words, c.bytes);
    tool_string_dup(ret, out.data);
    return true;
}

typedef struct {
    buf_t table;
    counts_t total;
    long files;
} report_t;

static int report_visit(void *ctx, const char *path) {
    report_t *r = ctx;
    counts_t c = {0};
    if (count_file(path, &c) != 0) return 0;
    buf_printf(&r->table, "| %s | %ld | %ld | %ld |\n", path, c.lines, c.words, c.bytes);
    r->total.lines += c.lines, r->total.words += c.words, r->total.bytes += c.bytes, r->files++;
    return 0;
}

static bool run_report(const char *input, tool_string_t *ret, tool_tool_error_t *err) {
    char *source = json_string(input, "source"), *output = json_string(input, "output");
    if (!source || !output) return tool_fail(err, TOOL_TOOL_ERROR_INVALID_INPUT, "give a \"source\" and an \"output\"");
    report_t r = {{0}, {0}, 0};
    if (walk(source, report_visit, &r) != 0) return tool_errno(err, "read", source);
    buf_t doc = {0};
    buf_printf(&doc, "# Report on %s\n\n| file | lines | words | bytes |\n|---|---|---|---|\n", source);
    if (r.table.data) buf_puts(&doc, r.table.data);
    buf_printf(&doc, "\n%ld files, %ld lines, %ld words, %ld bytes.\n", r.files, r.total.lines, r.total.words,
               r.total.bytes);
    FILE *f = fopen(output, "wb");
    if (!f) return tool_errno(err, "write", output);
    size_t written = fwrite(doc.data, 1, doc.len, f);
    if (fclose(f) != 0 || written != doc.len) return tool_errno(err, "write", output);
    buf_t out = {0};
    buf_printf(&out, "wrote %s (%zu bytes, %ld files)", output, doc.len, r.files);
    tool_string_dup(ret, out.data);
    return true;
}

bool exports_tool_call(tool_string_t *name_arg, tool_string_t *input_arg, tool_string_t *ret, tool_tool_error_t *err) {
    char *name = take_string(name_arg), *input = take_string(input_arg);
    if (!strcmp(name, "grep")) return run_grep(input, ret, err);
    if (!strcmp(name, "count")) return run_count(input, ret, err);
    if (!strcmp(name, "report")) return run_report(input, ret, err);
    return tool_fail(err, TOOL_TOOL_ERROR_INVALID_INPUT, "unknown tool; see describe");
}
