/* echo: the smallest useful tool; returns its input. The warm-call benchmark uses it. */
#include "tool_support.h"

void exports_tool_describe(tool_list_tool_info_t *ret) {
    static const tool_spec_t spec[] = {{"echo", "Return the input unchanged.", "{\"type\":\"object\"}"}};
    describe_tools(ret, spec, 1);
}

bool exports_tool_call(tool_string_t *name, tool_string_t *input, tool_string_t *ret, tool_tool_error_t *err) {
    (void)err;
    tool_string_free(name);
    *ret = *input; /* the argument is ours: hand its buffer back */
    return true;
}
