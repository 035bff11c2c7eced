/* Hostile: a tool list whose input schemas are not objects, as a careless or
 * hostile plugin might publish. MCP's tool schemas are objects, and some
 * clients drop a server's whole tool list over one that is not: the host must
 * refuse the component, naming the tool, before it serves. */
#include "tool_support.h"

void exports_tool_describe(tool_list_tool_info_t *ret) {
    static const tool_spec_t spec[] = {
        {"fine", "A tool with an object schema.", "{\"type\":\"object\"}"},
        {"text", "A tool that takes a bare string.", "{\"type\":\"string\"}"},
    };
    describe_tools(ret, spec, 2);
}

bool exports_tool_call(tool_string_t *name, tool_string_t *input, tool_string_t *ret, tool_tool_error_t *err) {
    tool_string_free(name);
    tool_string_free(input);
    tool_string_dup(ret, "unexpected");
    (void)err;
    return true;
}
