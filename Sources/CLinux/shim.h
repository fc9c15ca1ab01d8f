// glibc calls Swift cannot make or cannot see (libc6-dev, nothing to link). Prefix: clinux_.
// - prctl(2) is variadic: the one call the bridge needs.
// - mallopt(3) lives in <malloc.h>, which the Glibc module does not export.
// - epoll(7) and eventfd(2) are not in the Glibc module either; `struct epoll_event` is packed on x86-64, so events
//   cross into Swift as two plain arrays (descriptor, event bits) instead.
#ifndef CLINUX_SHIM_H
#define CLINUX_SHIM_H
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>

#define CLINUX_EPOLL_MAX_EVENTS 64

static const uint32_t clinux_epollin = EPOLLIN;
static const uint32_t clinux_epollout = EPOLLOUT;
static const uint32_t clinux_epollerr = EPOLLERR;
static const uint32_t clinux_epollhup = EPOLLHUP;
static const int clinux_epoll_ctl_add = EPOLL_CTL_ADD;
static const int clinux_epoll_ctl_mod = EPOLL_CTL_MOD;
static const int clinux_epoll_ctl_del = EPOLL_CTL_DEL;

/// A close-on-exec epoll instance, or -1 with errno.
static inline int clinux_epoll_create(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

/// epoll_ctl with the descriptor itself as the event's data.
static inline int clinux_epoll_ctl(int epfd, int op, int fd, uint32_t events) {
    struct epoll_event event = {.events = events, .data = {.fd = fd}};
    return epoll_ctl(epfd, op, fd, &event);
}

/// epoll_wait for at most `capacity` (≤ CLINUX_EPOLL_MAX_EVENTS) events, copied into `fds` and `events`.
static inline int clinux_epoll_wait(int epfd, int32_t *fds, uint32_t *events, int capacity, int timeout_ms) {
    struct epoll_event ready[CLINUX_EPOLL_MAX_EVENTS];
    if (capacity > CLINUX_EPOLL_MAX_EVENTS) capacity = CLINUX_EPOLL_MAX_EVENTS;
    int count = epoll_wait(epfd, ready, capacity, timeout_ms);
    for (int index = 0; index < count; index++) {
        fds[index] = ready[index].data.fd;
        events[index] = ready[index].events;
    }
    return count;
}

/// A close-on-exec, non-blocking eventfd starting at zero, or -1 with errno.
static inline int clinux_eventfd(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

static inline int clinux_set_dumpable(int dumpable) {
    return prctl(PR_SET_DUMPABLE, (unsigned long)dumpable, 0UL, 0UL, 0UL);
}

static inline int clinux_set_mmap_threshold(int bytes) {
    return mallopt(M_MMAP_THRESHOLD, bytes);
}
#endif
