// libmicrohttpd's MHD_start_daemon is variadic; this wrapper fixes the options we use. Prefix: cmhd_.
#ifndef CMICROHTTPD_SHIM_H
#define CMICROHTTPD_SHIM_H
#include <stdint.h>
#include <stdarg.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <microhttpd.h>

/// Starts a daemon bound to `addr` (IPv4 or IPv6) with a connection timeout and a connection limit.
static inline struct MHD_Daemon *cmhd_start_daemon(unsigned int flags, const struct sockaddr *addr,
                                                   MHD_AccessHandlerCallback handler, void *handler_cls,
                                                   unsigned int connection_timeout_seconds,
                                                   unsigned int connection_limit) {
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_cls,
                            MHD_OPTION_SOCK_ADDR, addr,
                            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_END);
}
#endif
