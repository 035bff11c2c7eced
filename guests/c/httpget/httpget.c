/* httpget: one GET through wasi:http (the `tool-http` world), for the network
 * allowlist's tests and benchmark. Reports the status and the body's size;
 * a request the host refuses is `denied`, which Warden words for the model. */
#include <stdio.h>

#include "buf.h"
#include "json.h"
#include "tool_support.h"

void exports_tool_describe(tool_list_tool_info_t *ret) {
    static const tool_spec_t spec[] = {
        {"get", "GET scheme://authority/path and report the status and the body's size.",
         "{\"type\":\"object\",\"required\":[\"authority\"],\"properties\":{\"scheme\":{\"enum\":[\"http\",\"https\"]},"
         "\"authority\":{\"type\":\"string\"},\"path\":{\"type\":\"string\"}}}"}};
    describe_tools(ret, spec, 1);
}

static void block_on(wasi_io_poll_own_pollable_t pollable) {
    wasi_io_poll_method_pollable_block(wasi_io_poll_borrow_pollable(pollable));
    wasi_io_poll_pollable_drop_own(pollable);
}

static bool http_fail(tool_tool_error_t *err, const char *authority, const wasi_http_types_error_code_t *code) {
    char message[256];
    if (code->tag == WASI_HTTP_TYPES_ERROR_CODE_HTTP_REQUEST_DENIED) {
        snprintf(message, sizeof message, "http: %s: request denied", authority);
        return tool_fail(err, TOOL_TOOL_ERROR_DENIED, message);
    }
    snprintf(message, sizeof message, "http: %s: error code %d", authority, code->tag);
    return tool_fail(err, TOOL_TOOL_ERROR_FAILED, message);
}

/* The body's size, read to its end. */
static uint64_t body_size(wasi_http_types_borrow_incoming_response_t response) {
    wasi_http_types_own_incoming_body_t body;
    wasi_io_streams_own_input_stream_t stream;
    uint64_t total = 0;
    if (!wasi_http_types_method_incoming_response_consume(response, &body)) return 0;
    if (wasi_http_types_method_incoming_body_stream(wasi_http_types_borrow_incoming_body(body), &stream)) {
        tool_list_u8_t chunk;
        wasi_io_streams_stream_error_t error;
        while (wasi_io_streams_method_input_stream_blocking_read(wasi_io_streams_borrow_input_stream(stream), 65536, &chunk,
                                                                 &error)) {
            total += chunk.len;
            tool_list_u8_free(&chunk);
        }
        wasi_io_streams_input_stream_drop_own(stream);
    }
    wasi_http_types_future_trailers_drop_own(wasi_http_types_static_incoming_body_finish(body));
    return total;
}

bool exports_tool_call(tool_string_t *name, tool_string_t *input_arg, tool_string_t *ret, tool_tool_error_t *err) {
    tool_string_free(name);
    char *input = take_string(input_arg);
    char *authority = json_string(input, "authority");
    char *path = json_string(input, "path");
    char *scheme = json_string(input, "scheme");
    if (!authority) return tool_fail(err, TOOL_TOOL_ERROR_INVALID_INPUT, "give an authority, e.g. 127.0.0.1:8080");
    /* Never a default in place of a value that was given but cannot be used (a NUL in it). */
    if ((!path && json_has(input, "path")) || (!scheme && json_has(input, "scheme")))
        return tool_fail(err, TOOL_TOOL_ERROR_INVALID_INPUT, "\"path\" and \"scheme\" must be strings without NUL");

    wasi_http_types_own_outgoing_request_t request =
        wasi_http_types_constructor_outgoing_request(wasi_http_types_constructor_fields());
    wasi_http_types_borrow_outgoing_request_t borrowed = wasi_http_types_borrow_outgoing_request(request);
    wasi_http_types_scheme_t which = {.tag = scheme && strcmp(scheme, "https") == 0 ? WASI_HTTP_TYPES_SCHEME_HTTPS
                                                                                     : WASI_HTTP_TYPES_SCHEME_HTTP};
    tool_string_t text;
    wasi_http_types_method_outgoing_request_set_scheme(borrowed, &which);
    tool_string_set(&text, authority);
    wasi_http_types_method_outgoing_request_set_authority(borrowed, &text);
    tool_string_set(&text, path ? path : "/");
    wasi_http_types_method_outgoing_request_set_path_with_query(borrowed, &text);

    wasi_http_types_own_outgoing_body_t outgoing;
    wasi_http_types_method_outgoing_request_body(borrowed, &outgoing);
    wasi_http_outgoing_handler_own_future_incoming_response_t future;
    wasi_http_types_error_code_t code;
    if (!wasi_http_outgoing_handler_handle(request, NULL, &future, &code)) return http_fail(err, authority, &code);
    wasi_http_types_static_outgoing_body_finish(outgoing, NULL, &code);

    wasi_http_types_borrow_future_incoming_response_t waiting = wasi_http_types_borrow_future_incoming_response(future);
    wasi_http_types_result_result_own_incoming_response_error_code_void_t answer;
    while (!wasi_http_types_method_future_incoming_response_get(waiting, &answer))
        block_on(wasi_http_types_method_future_incoming_response_subscribe(waiting));
    if (answer.is_err) return tool_fail(err, TOOL_TOOL_ERROR_FAILED, "http: the response was already taken");
    if (answer.val.ok.is_err) return http_fail(err, authority, &answer.val.ok.val.err);

    wasi_http_types_own_incoming_response_t response = answer.val.ok.val.ok;
    wasi_http_types_borrow_incoming_response_t reading = wasi_http_types_borrow_incoming_response(response);
    unsigned status = wasi_http_types_method_incoming_response_status(reading);
    uint64_t bytes = body_size(reading);
    wasi_http_types_incoming_response_drop_own(response);
    wasi_http_types_future_incoming_response_drop_own(future);

    buf_t out = {0};
    buf_printf(&out, "{\"status\":%u,\"bytes\":%llu}", status, (unsigned long long)bytes);
    tool_string_dup(ret, out.data);
    return true;
}
