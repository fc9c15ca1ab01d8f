// libmicrohttpd's MHD_start_daemon and MHD_get_daemon_info are variadic, which Swift cannot call: these wrappers
// fix the options we use, with the exact C types the varargs expect (size_t vs unsigned int matters on 64-bit).
// Prefix: cmhd_.
#ifndef CMICROHTTPD_SHIM_H
#define CMICROHTTPD_SHIM_H
#include <stdint.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <microhttpd.h>

/// Starts a daemon with its own polling thread(s) (epoll/poll chosen by MHD_USE_AUTO), bound to `addr`.
/// `ipv6` must be set for an AF_INET6 address; `dual_stack` also accepts IPv4 on it (for `::`).
/// `thread_pool_size` > 1 runs that many polling threads. `memory_limit` bounds the per-connection buffer for the
/// request line and headers (oversized requests get 431/414 and are closed). `per_ip_connection_limit` bounds the
/// connections of one client address (more are closed at once). Returns NULL on failure (errno set by the failing
/// bind/listen, e.g. EADDRINUSE).
static inline struct MHD_Daemon *cmhd_start_daemon(const struct sockaddr *addr, int ipv6, int dual_stack,
                                                   MHD_AccessHandlerCallback handler, void *handler_cls,
                                                   unsigned int connection_timeout_seconds,
                                                   unsigned int connection_limit,
                                                   unsigned int per_ip_connection_limit,
                                                   unsigned int thread_pool_size,
                                                   size_t memory_limit) {
    unsigned int flags = MHD_USE_AUTO_INTERNAL_THREAD;
    if (dual_stack) {
        flags |= MHD_USE_DUAL_STACK;
    } else if (ipv6) {
        flags |= MHD_USE_IPv6;
    }
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_cls,
                            MHD_OPTION_SOCK_ADDR, addr,
                            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip_connection_limit,
                            MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size > 1 ? thread_pool_size : 0u,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory_limit,
                            MHD_OPTION_END);
}

/// The port the daemon listens on (the kernel's choice when bound to port 0); 0 if unknown.
static inline uint16_t cmhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

#endif
