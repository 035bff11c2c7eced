/* {{name}}: a Warden tool in C. Counts the lines and words of a text file in the sandbox. */
#include <ctype.h>

#include "json.h"
#include "tool_support.h"

void exports_tool_describe(tool_list_tool_info_t *ret) {
    static const tool_spec_t tools[] = {{"{{name}}", "Count the lines and words of a text file.",
                                         "{\"type\":\"object\",\"required\":[\"path\"],"
                                         "\"properties\":{\"path\":{\"type\":\"string\",\"description\":\"e.g. /data/hello.md\"}}}"}};
    describe_tools(ret, tools, 1);
}

/* Arguments belong to the callee. Return true with *ret, or false with *err. */
bool exports_tool_call(tool_string_t *name, tool_string_t *input, tool_string_t *ret, tool_tool_error_t *err) {
    tool_string_free(name);
    char *json = take_string(input);
    char *path = json_string(json, "path");
    free(json);
    if (!path) return tool_fail(err, TOOL_TOOL_ERROR_INVALID_INPUT, "missing field 'path'");
    /* Plain stdio: the policy's mounts (/data, /out) are the only folders there are. */
    FILE *file = fopen(path, "r");
    if (!file) {
        bool answer = tool_errno(err, "read", path);
        free(path);
        return answer;
    }
    long lines = 0, words = 0;
    for (int c, in_word = 0; (c = fgetc(file)) != EOF;) {
        lines += c == '\n';
        words += !in_word && !isspace(c);
        in_word = !isspace(c);
    }
    fclose(file);
    char out[600];
    snprintf(out, sizeof out, "%.500s: %ld lines, %ld words", path, lines, words);
    free(path);
    tool_string_dup(ret, out);
    return true;
}
