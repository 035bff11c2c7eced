/* Hostile: reaches for the network through wasi:sockets directly (a tool, so
 * that it can import the sockets interfaces): a name lookup, then a TCP
 * connection to 127.0.0.1:PORT. It reports each step's outcome. */
#include <stdio.h>

#include "buf.h"
#include "json.h"
#include "tool_support.h"

void exports_tool_describe(tool_list_tool_info_t *ret) {
    static const tool_spec_t spec[] = {{"probe", "Try a DNS lookup and a TCP connection to 127.0.0.1:port.",
                                        "{\"type\":\"object\",\"properties\":{\"port\":{\"type\":\"integer\"}}}"}};
    describe_tools(ret, spec, 1);
}

static void lookup(buf_t *out, wasi_sockets_network_borrow_network_t net, const char *name) {
    tool_string_t host;
    tool_string_set(&host, name);
    wasi_sockets_ip_name_lookup_own_resolve_address_stream_t stream;
    wasi_sockets_ip_name_lookup_error_code_t err;
    if (!wasi_sockets_ip_name_lookup_resolve_addresses(net, &host, &stream, &err)) {
        buf_printf(out, "lookup %s: refused (error %d)\n", name, err);
        return;
    }
    wasi_sockets_ip_name_lookup_option_ip_address_t addr;
    wasi_sockets_ip_name_lookup_borrow_resolve_address_stream_t borrowed =
        wasi_sockets_ip_name_lookup_borrow_resolve_address_stream(stream);
    for (int tries = 0; tries < 100; tries++) {
        if (!wasi_sockets_ip_name_lookup_method_resolve_address_stream_resolve_next_address(borrowed, &addr, &err)) {
            if (err == WASI_SOCKETS_NETWORK_ERROR_CODE_WOULD_BLOCK) {
                /* Wait for the answer instead of spinning: a loaded host answers late. */
                wasi_io_poll_own_pollable_t ready =
                    wasi_sockets_ip_name_lookup_method_resolve_address_stream_subscribe(borrowed);
                wasi_io_poll_method_pollable_block(wasi_io_poll_borrow_pollable(ready));
                wasi_io_poll_pollable_drop_own(ready);
                continue;
            }
            buf_printf(out, "lookup %s: failed (error %d)\n", name, err);
            return;
        }
        buf_printf(out, "lookup %s: RESOLVED\n", name);
        return;
    }
    buf_printf(out, "lookup %s: no answer\n", name);
}

static void connect_tcp(buf_t *out, wasi_sockets_network_borrow_network_t net, uint16_t port) {
    wasi_sockets_tcp_create_socket_own_tcp_socket_t sock;
    wasi_sockets_tcp_create_socket_error_code_t err;
    if (!wasi_sockets_tcp_create_socket_create_tcp_socket(WASI_SOCKETS_NETWORK_IP_ADDRESS_FAMILY_IPV4, &sock, &err)) {
        buf_printf(out, "socket: refused (error %d)\n", err);
        return;
    }
    wasi_sockets_tcp_borrow_tcp_socket_t s = wasi_sockets_tcp_borrow_tcp_socket(sock);
    wasi_sockets_tcp_ip_socket_address_t addr = {.tag = WASI_SOCKETS_NETWORK_IP_SOCKET_ADDRESS_IPV4};
    addr.val.ipv4.port = port;
    addr.val.ipv4.address = (wasi_sockets_network_ipv4_address_t){127, 0, 0, 1};
    if (!wasi_sockets_tcp_method_tcp_socket_start_connect(s, net, &addr, &err)) {
        buf_printf(out, "connect: refused (error %d)\n", err);
        return;
    }
    wasi_sockets_tcp_own_pollable_t ready = wasi_sockets_tcp_method_tcp_socket_subscribe(s);
    wasi_io_poll_method_pollable_block(wasi_io_poll_borrow_pollable(ready));
    wasi_sockets_tcp_tuple2_own_input_stream_own_output_stream_t streams;
    if (!wasi_sockets_tcp_method_tcp_socket_finish_connect(s, &streams, &err)) {
        buf_printf(out, "connect: failed (error %d)\n", err);
        return;
    }
    buf_printf(out, "connect: CONNECTED\n");
}

bool exports_tool_call(tool_string_t *name, tool_string_t *input_arg, tool_string_t *ret, tool_tool_error_t *err) {
    (void)err;
    tool_string_free(name);
    char *input = take_string(input_arg);
    buf_t out = {0};
    wasi_sockets_instance_network_own_network_t network = wasi_sockets_instance_network_instance_network();
    wasi_sockets_network_borrow_network_t net = wasi_sockets_network_borrow_network(network);
    lookup(&out, net, "localhost");
    connect_tcp(&out, net, (uint16_t)json_number(input, "port", 9));
    tool_string_dup(ret, out.data);
    return true;
}
