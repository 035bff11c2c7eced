/* Hostile: reaches for the network through wasi:sockets directly (a tool, so
 * that it can import the sockets interfaces): a name lookup (of `host`,
 * default localhost), then a TCP connection to PORT at the IPv4 address the
 * lookup gave (127.0.0.1 when it gave none), unless `connect` is false; with
 * `listen`, a listening TCP socket; with `udp`, a datagram to 127.0.0.1:PORT.
 * It reports each step. */
#include <stdio.h>

#include "buf.h"
#include "json.h"
#include "tool_support.h"

void exports_tool_describe(tool_list_tool_info_t *ret) {
    static const tool_spec_t spec[] = {{"probe", "Try a DNS lookup, a TCP connection, a listener and a datagram.",
                                        "{\"type\":\"object\",\"properties\":{\"port\":{\"type\":\"integer\"},"
                                        "\"host\":{\"type\":\"string\"},\"listen\":{\"type\":\"boolean\"},"
                                        "\"udp\":{\"type\":\"boolean\"},\"connect\":{\"type\":\"boolean\"}}}"}};
    describe_tools(ret, spec, 1);
}

/* The first IPv4 address `name` resolves to, into `found`; false when none. */
static bool lookup(buf_t *out, wasi_sockets_network_borrow_network_t net, const char *name,
                   wasi_sockets_network_ipv4_address_t *found) {
    tool_string_t host;
    tool_string_set(&host, name);
    wasi_sockets_ip_name_lookup_own_resolve_address_stream_t stream;
    wasi_sockets_ip_name_lookup_error_code_t err;
    if (!wasi_sockets_ip_name_lookup_resolve_addresses(net, &host, &stream, &err)) {
        buf_printf(out, "lookup %s: refused (error %d)\n", name, err);
        return false;
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
            return false;
        }
        if (!addr.is_some) break;
        if (addr.val.tag != WASI_SOCKETS_NETWORK_IP_ADDRESS_IPV4) continue;
        *found = addr.val.val.ipv4;
        buf_printf(out, "lookup %s: RESOLVED\n", name);
        return true;
    }
    buf_printf(out, "lookup %s: no answer\n", name);
    return false;
}

static void connect_tcp(buf_t *out, wasi_sockets_network_borrow_network_t net, wasi_sockets_network_ipv4_address_t to,
                        uint16_t port) {
    wasi_sockets_tcp_create_socket_own_tcp_socket_t sock;
    wasi_sockets_tcp_create_socket_error_code_t err;
    if (!wasi_sockets_tcp_create_socket_create_tcp_socket(WASI_SOCKETS_NETWORK_IP_ADDRESS_FAMILY_IPV4, &sock, &err)) {
        buf_printf(out, "socket: refused (error %d)\n", err);
        return;
    }
    wasi_sockets_tcp_borrow_tcp_socket_t s = wasi_sockets_tcp_borrow_tcp_socket(sock);
    wasi_sockets_tcp_ip_socket_address_t addr = {.tag = WASI_SOCKETS_NETWORK_IP_SOCKET_ADDRESS_IPV4};
    addr.val.ipv4.port = port;
    addr.val.ipv4.address = to;
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

/* A TCP socket bound to 127.0.0.1 (any port), then listening. */
static void listen_tcp(buf_t *out, wasi_sockets_network_borrow_network_t net) {
    wasi_sockets_tcp_create_socket_own_tcp_socket_t sock;
    wasi_sockets_tcp_create_socket_error_code_t err;
    if (!wasi_sockets_tcp_create_socket_create_tcp_socket(WASI_SOCKETS_NETWORK_IP_ADDRESS_FAMILY_IPV4, &sock, &err)) {
        buf_printf(out, "listen: socket refused (error %d)\n", err);
        return;
    }
    wasi_sockets_tcp_borrow_tcp_socket_t s = wasi_sockets_tcp_borrow_tcp_socket(sock);
    wasi_sockets_tcp_ip_socket_address_t local = {.tag = WASI_SOCKETS_NETWORK_IP_SOCKET_ADDRESS_IPV4};
    local.val.ipv4.address = (wasi_sockets_network_ipv4_address_t){127, 0, 0, 1};
    if (!wasi_sockets_tcp_method_tcp_socket_start_bind(s, net, &local, &err) ||
        !wasi_sockets_tcp_method_tcp_socket_finish_bind(s, &err)) {
        buf_printf(out, "listen: bind refused (error %d)\n", err);
        return;
    }
    if (!wasi_sockets_tcp_method_tcp_socket_start_listen(s, &err)) {
        buf_printf(out, "listen: refused (error %d)\n", err);
        return;
    }
    wasi_sockets_tcp_own_pollable_t ready = wasi_sockets_tcp_method_tcp_socket_subscribe(s);
    wasi_io_poll_method_pollable_block(wasi_io_poll_borrow_pollable(ready));
    if (!wasi_sockets_tcp_method_tcp_socket_finish_listen(s, &err)) {
        buf_printf(out, "listen: failed (error %d)\n", err);
        return;
    }
    buf_printf(out, "listen: LISTENING\n");
}

/* One datagram, "probe", to 127.0.0.1:PORT. */
static void send_udp(buf_t *out, wasi_sockets_network_borrow_network_t net, uint16_t port) {
    wasi_sockets_udp_create_socket_own_udp_socket_t sock;
    wasi_sockets_udp_create_socket_error_code_t err;
    if (!wasi_sockets_udp_create_socket_create_udp_socket(WASI_SOCKETS_NETWORK_IP_ADDRESS_FAMILY_IPV4, &sock, &err)) {
        buf_printf(out, "udp: socket refused (error %d)\n", err);
        return;
    }
    wasi_sockets_udp_borrow_udp_socket_t s = wasi_sockets_udp_borrow_udp_socket(sock);
    wasi_sockets_udp_ip_socket_address_t any = {.tag = WASI_SOCKETS_NETWORK_IP_SOCKET_ADDRESS_IPV4};
    if (!wasi_sockets_udp_method_udp_socket_start_bind(s, net, &any, &err)) {
        buf_printf(out, "udp: bind refused (error %d)\n", err);
        return;
    }
    wasi_sockets_udp_own_pollable_t ready = wasi_sockets_udp_method_udp_socket_subscribe(s);
    wasi_io_poll_method_pollable_block(wasi_io_poll_borrow_pollable(ready));
    wasi_io_poll_pollable_drop_own(ready);
    if (!wasi_sockets_udp_method_udp_socket_finish_bind(s, &err)) {
        buf_printf(out, "udp: bind failed (error %d)\n", err);
        return;
    }
    wasi_sockets_udp_tuple2_own_incoming_datagram_stream_own_outgoing_datagram_stream_t streams;
    if (!wasi_sockets_udp_method_udp_socket_stream(s, NULL, &streams, &err)) {
        buf_printf(out, "udp: stream refused (error %d)\n", err);
        return;
    }
    wasi_sockets_udp_borrow_outgoing_datagram_stream_t outgoing = wasi_sockets_udp_borrow_outgoing_datagram_stream(streams.f1);
    uint64_t permitted = 0;
    if (!wasi_sockets_udp_method_outgoing_datagram_stream_check_send(outgoing, &permitted, &err)) {
        buf_printf(out, "udp: check-send failed (error %d)\n", err);
        return;
    }
    wasi_sockets_udp_outgoing_datagram_t datagram = {0};
    datagram.data.ptr = (uint8_t *)"probe";
    datagram.data.len = 5;
    datagram.remote_address.is_some = true;
    datagram.remote_address.val.tag = WASI_SOCKETS_NETWORK_IP_SOCKET_ADDRESS_IPV4;
    datagram.remote_address.val.val.ipv4.port = port;
    datagram.remote_address.val.val.ipv4.address = (wasi_sockets_network_ipv4_address_t){127, 0, 0, 1};
    wasi_sockets_udp_list_outgoing_datagram_t list = {&datagram, 1};
    uint64_t sent = 0;
    if (!wasi_sockets_udp_method_outgoing_datagram_stream_send(outgoing, &list, &sent, &err)) {
        buf_printf(out, "udp: refused (error %d)\n", err);
        return;
    }
    buf_printf(out, sent == 1 ? "udp: SENT\n" : "udp: not sent\n");
}

bool exports_tool_call(tool_string_t *name, tool_string_t *input_arg, tool_string_t *ret, tool_tool_error_t *err) {
    (void)err;
    tool_string_free(name);
    char *input = take_string(input_arg);
    buf_t out = {0};
    wasi_sockets_instance_network_own_network_t network = wasi_sockets_instance_network_instance_network();
    wasi_sockets_network_borrow_network_t net = wasi_sockets_network_borrow_network(network);
    char *host = json_string(input, "host");
    wasi_sockets_network_ipv4_address_t to = {127, 0, 0, 1};
    uint16_t port = (uint16_t)json_number(input, "port", 9);
    if (json_bool(input, "connect", true)) {
        lookup(&out, net, host ? host : "localhost", &to);
        connect_tcp(&out, net, to, port);
    }
    if (json_bool(input, "listen", false)) listen_tcp(&out, net);
    if (json_bool(input, "udp", false)) send_udp(&out, net, port);
    tool_string_dup(ret, out.data);
    return true;
}
