internal import CLinux

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// An epoll(7) set: the descriptors one thread waits on, each registered once and reported only when ready.
///
/// Unlike `poll(2)`, a wait costs nothing per idle descriptor and the set is not handed to the kernel again on
/// every wait: the webhook delivery driver waits on the sockets curl asks it to watch and its queue's wake-up
/// (docs/ARCHITECTURE.md, "Webhook delivery"). Level-triggered: a descriptor left ready is reported again.
/// Owned by one thread; the epoll descriptor is closed in deinit.
package final class EventPoll {
    /// The event bits a descriptor is registered for, or is reported with.
    package struct Events: OptionSet, Sendable, Equatable {
        /// epoll's event bits.
        package let rawValue: UInt32
        /// Creates a set from epoll's event bits.
        package init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Data (or end of stream) can be read without blocking.
        package static let readable = Events(rawValue: clinux_epollin)
        /// Data can be written without blocking.
        package static let writable = Events(rawValue: clinux_epollout)
        /// An error is pending on the descriptor (always reported, never asked for).
        package static let error = Events(rawValue: clinux_epollerr)
        /// The peer hung up (always reported, never asked for).
        package static let hangUp = Events(rawValue: clinux_epollhup)
    }

    private let descriptor: Int32
    /// Where `wait` copies the ready descriptors and their events (kept between waits: no allocation per wait).
    private var readyDescriptors: [Int32]
    private var readyEvents: [UInt32]

    /// Creates an empty set reporting up to 64 ready descriptors per wait; throws when out of descriptors.
    package init() throws(SystemError) {
        let descriptor = clinux_epoll_create()
        guard descriptor >= 0 else { throw SystemError(operation: "epoll_create1", errno: errno) }
        self.descriptor = descriptor
        let capacity = Int(CLINUX_EPOLL_MAX_EVENTS)
        readyDescriptors = Array(repeating: -1, count: capacity)
        readyEvents = Array(repeating: 0, count: capacity)
    }

    deinit {
        close(descriptor)
    }

    /// Starts watching `fd` for `events`. Throws `EEXIST` when it is watched already.
    package func add(_ fd: Int32, _ events: Events) throws(SystemError) {
        try control(clinux_epoll_ctl_add, fd, events, "epoll_ctl(ADD)")
    }

    /// Changes the events `fd` is watched for. Throws `ENOENT` when it is not watched (or was closed since).
    package func modify(_ fd: Int32, _ events: Events) throws(SystemError) {
        try control(clinux_epoll_ctl_mod, fd, events, "epoll_ctl(MOD)")
    }

    /// Stops watching `fd`. Throws `ENOENT` when it is not watched, `EBADF` when it was closed.
    package func remove(_ fd: Int32) throws(SystemError) {
        try control(clinux_epoll_ctl_del, fd, [], "epoll_ctl(DEL)")
    }

    private func control(_ operation: Int32, _ fd: Int32, _ events: Events, _ name: String) throws(SystemError) {
        guard clinux_epoll_ctl(descriptor, operation, fd, events.rawValue) == 0 else {
            throw SystemError(operation: name, errno: errno)
        }
    }

    /// Sleeps until a watched descriptor is ready or `timeoutMilliseconds` passed (-1: no limit), then calls
    /// `ready` for each ready descriptor with its events; returns how many there were (0 on timeout or a signal).
    /// `ready` may add, change and remove descriptors: the events were copied out first.
    @discardableResult
    package func wait(
        timeoutMilliseconds: Int32, _ ready: (_ fd: Int32, _ events: Events) -> Void
    ) throws(SystemError) -> Int {
        let capacity = Int32(readyDescriptors.count)
        let count = readyDescriptors.withUnsafeMutableBufferPointer { fds in
            readyEvents.withUnsafeMutableBufferPointer { events in
                clinux_epoll_wait(descriptor, fds.baseAddress, events.baseAddress, capacity, timeoutMilliseconds)
            }
        }
        if count < 0 {
            let error = errno
            if error == EINTR { return 0 }
            throw SystemError(operation: "epoll_wait", errno: error)
        }
        for index in 0..<Int(count) { ready(readyDescriptors[index], Events(rawValue: readyEvents[index])) }
        return Int(count)
    }
}

@available(*, unavailable)
extension EventPoll: Sendable {}
