import BridgeSystem
import CCurl

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// What curl asks a socket-driven multi handle's owner to watch (CURLMOPT_SOCKETFUNCTION, CURLMOPT_TIMERFUNCTION):
/// its sockets, kept in one epoll set, and its next timer, kept as a deadline.
///
/// The context curl's C callbacks get as user data (`CurlMultiHandle.driveSockets`): passed unretained; the multi
/// handle holds this object strongly, so it outlives every callback, `curl_multi_cleanup`'s included. Callbacks run
/// only inside curl calls on the multi handle, on its one thread, so nothing here is locked.
final class CurlSocketEvents {
    /// Curl's sockets, and whatever else the owner waits on beside them (the delivery queue's wake-up).
    let poll: EventPoll
    /// When curl wants `curl_multi_socket_action(CURL_SOCKET_TIMEOUT)`; nil when it has no timer.
    private(set) var deadline: ContinuousClock.Instant?
    /// The events each socket is registered for in `poll`: a change curl reports costs one `epoll_ctl`, a report
    /// that changes nothing none.
    private var registered: [Int32: EventPoll.Events] = [:]
    /// The last `epoll_ctl` failure, for the owner to log (a callback cannot throw).
    private(set) var lastFailure: SystemError?

    /// Creates the epoll set; throws when the process is out of descriptors.
    init() throws(SystemError) {
        poll = try EventPoll()
    }

    /// The sockets curl watches now (tests: a finished transfer's socket is no longer watched).
    var watchedSockets: Int { registered.count }

    /// Takes the timer if it is due (the caller then runs curl's timeouts); a new one comes through the callback.
    func takeDueTimer(now: ContinuousClock.Instant = .now) -> Bool {
        guard let deadline, deadline <= now else { return false }
        self.deadline = nil
        return true
    }

    /// Milliseconds until curl's timer, rounded up (never waking before it is due), at most `limit`.
    func millisecondsToTimer(limit: Int32, now: ContinuousClock.Instant = .now) -> Int32 {
        guard let deadline else { return limit }
        let left = now.duration(to: deadline)
        if left <= .zero { return 0 }
        let (seconds, attoseconds) = left.components
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: min(milliseconds, Int64(limit)))
    }

    /// CURLMOPT_TIMERFUNCTION: -1 removes the timer, 0 asks for the timeouts to run at once.
    fileprivate func timerChanged(milliseconds: Int) {
        deadline = milliseconds < 0 ? nil : .now + .milliseconds(milliseconds)
    }

    /// CURLMOPT_SOCKETFUNCTION: curl wants `socket` watched for `what` (CURL_POLL_IN, _OUT, _INOUT), or no
    /// longer (CURL_POLL_REMOVE, before it closes the socket or leaves it idle in its connection cache).
    /// Always returns 0: -1 would make curl declare the whole multi handle dead (CURLM_ABORTED_BY_CALLBACK for
    /// every later call). A socket the set could not take (`epoll_ctl` out of memory or watches) is left out, its
    /// transfer ends on its own timeout, and the owner logs `lastFailure`.
    fileprivate func socketChanged(_ socket: Int32, what: Int32) -> Int32 {
        let wanted: EventPoll.Events
        switch what {
        case CURL_POLL_IN: wanted = .readable
        case CURL_POLL_OUT: wanted = .writable
        case CURL_POLL_INOUT: wanted = [.readable, .writable]
        case CURL_POLL_REMOVE:
            // ENOENT/EBADF: the socket was closed before (the kernel forgot it then): nothing left to remove.
            if registered.removeValue(forKey: socket) != nil { try? poll.remove(socket) }
            return 0
        default: return 0
        }
        let current = registered[socket]
        if current == wanted { return 0 }
        do throws(SystemError) {
            try register(socket, wanted, known: current != nil)
        } catch {
            registered.removeValue(forKey: socket)
            lastFailure = error
            return 0
        }
        registered[socket] = wanted
        return 0
    }

    /// Adds `socket` to the set, or changes its events when `known`. A new socket that got the number of one curl
    /// did not remove is found registered already (EEXIST: changed instead); a known one that curl closed without
    /// a REMOVE, and whose number came back, is found gone (ENOENT: added instead).
    private func register(_ socket: Int32, _ wanted: EventPoll.Events, known: Bool) throws(SystemError) {
        do throws(SystemError) {
            if known { try poll.modify(socket, wanted) } else { try poll.add(socket, wanted) }
        } catch {
            guard error.errno == (known ? ENOENT : EEXIST) else { throw error }
            if known { try poll.add(socket, wanted) } else { try poll.modify(socket, wanted) }
        }
    }
}

@available(*, unavailable)
extension CurlSocketEvents: Sendable {}

/// CURLMOPT_SOCKETFUNCTION for a multi handle whose socket data is a `CurlSocketEvents` (unretained, see there).
let curlSocketCallback: ccurl_socket_callback = { _, socket, what, userp, _ in
    guard let userp else { return -1 }
    return Unmanaged<CurlSocketEvents>.fromOpaque(userp).takeUnretainedValue().socketChanged(socket, what: what)
}

/// CURLMOPT_TIMERFUNCTION for a multi handle whose timer data is a `CurlSocketEvents` (unretained, see there).
let curlTimerCallback: ccurl_timer_callback = { _, milliseconds, userp in
    guard let userp else { return -1 }
    Unmanaged<CurlSocketEvents>.fromOpaque(userp).takeUnretainedValue().timerChanged(milliseconds: milliseconds)
    return 0
}
