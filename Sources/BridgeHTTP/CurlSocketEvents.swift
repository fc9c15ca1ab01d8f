import BridgeSystem
import CCurl

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// What curl asks a socket-driven multi handle's owner to watch (CURLMOPT_SOCKETFUNCTION, CURLMOPT_TIMERFUNCTION):
/// its sockets, kept in one epoll set, and its next timer, kept as a deadline.
///
/// A kept-alive connection's socket stays in the set between its transfers: curl stops watching it when a transfer
/// ends (CURL_POLL_REMOVE) and starts again with the next one on it (CURL_POLL_IN), and an `epoll_ctl` out and one
/// back in for each delivery bought nothing. So a connection's socket that curl stops watching for reading only is
/// kept registered, marked idle; the owner drops an idle socket that turns up ready (`isWatched`: the server closed
/// it, most likely; curl checks a connection before it reuses one). The kernel forgets a socket when it is closed,
/// so this keeps only sockets whose close it hears of: the connections' sockets, which the easy handles open and
/// close through `curlOpenSocketCallback` and `curlCloseSocketCallback` (`CurlEasyHandle.setSocketCallbacks`). Any
/// other socket curl reports (the threaded resolver's, which curl closes itself) leaves the set at its REMOVE.
///
/// The context curl's C callbacks get as user data (`CurlMultiHandle.driveSockets`): passed unretained; the multi
/// handle holds this object strongly, so it outlives every callback, `curl_multi_cleanup`'s included (which closes
/// the cached connections). Callbacks run only inside curl calls on the multi handle, on its one thread, so nothing
/// here is locked.
final class CurlSocketEvents {
    /// Curl's sockets, and whatever else the owner waits on beside them (the delivery queue's wake-up).
    let poll: EventPoll
    /// When curl wants `curl_multi_socket_action(CURL_SOCKET_TIMEOUT)`; nil when it has no timer.
    private(set) var deadline: ContinuousClock.Instant?
    /// Each socket in `poll`: the events it is registered for, and whether curl watches it (false: kept idle).
    private var registered: [Int32: (events: EventPoll.Events, watched: Bool)] = [:]
    /// Connection sockets open now: opened through `curlOpenSocketCallback`, not closed yet.
    private var connectionSockets: Set<Int32> = []
    /// The last `epoll_ctl` failure, for the owner to log (a callback cannot throw).
    private(set) var lastFailure: SystemError?

    /// Creates the epoll set; throws when the process is out of descriptors.
    init() throws(SystemError) {
        poll = try EventPoll()
    }

    /// The sockets curl watches now (tests: a finished transfer's socket is no longer watched).
    var watchedSockets: Int { registered.values.count { $0.watched } }

    /// The sockets in the set, watched or kept idle (tests).
    var registeredSockets: Int { registered.count }

    /// Whether curl watches `socket`. When it does not (an idle connection's socket that turned up ready), the
    /// socket leaves the set, so that it is not reported again and again.
    func isWatched(_ socket: Int32) -> Bool {
        guard let registration = registered[socket] else { return false }
        if registration.watched { return true }
        registered.removeValue(forKey: socket)
        try? poll.remove(socket)
        return false
    }

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
            guard let registration = registered[socket] else { return 0 }
            if registration.events == .readable && connectionSockets.contains(socket) {
                registered[socket] = (.readable, false)  // kept idle: readable only when the server closes it
            } else {
                // Writable would be reported at every wait; another socket may be closed without a word.
                registered.removeValue(forKey: socket)
                try? poll.remove(socket)
            }
            return 0
        default: return 0
        }
        let current = registered[socket]?.events
        if current == wanted {
            registered[socket] = (wanted, true)
            return 0
        }
        do throws(SystemError) {
            if current == nil { try poll.add(socket, wanted) } else { try poll.modify(socket, wanted) }
        } catch {
            registered.removeValue(forKey: socket)
            lastFailure = error
            return 0
        }
        registered[socket] = (wanted, true)
        return 0
    }

    /// CURLOPT_OPENSOCKETFUNCTION: opens a connection's socket as curl would (`socket(2)` with the address's
    /// family, type and protocol; curl makes it non-blocking) and notes it.
    fileprivate func openSocket(_ address: UnsafeMutablePointer<curl_sockaddr>) -> Int32 {
        let socket = Glibc.socket(address.pointee.family, address.pointee.socktype, address.pointee.protocol)
        guard socket >= 0 else { return CURL_SOCKET_BAD }
        connectionOpened(socket)
        return socket
    }

    /// Notes a connection's socket, whose close this will hear of (tests call it for sockets they made).
    func connectionOpened(_ socket: Int32) {
        connectionSockets.insert(socket)
    }

    /// CURLOPT_CLOSESOCKETFUNCTION: forgets `socket` (closing it takes it out of the set) and closes it.
    fileprivate func closeSocket(_ socket: Int32) -> Int32 {
        connectionSockets.remove(socket)
        registered.removeValue(forKey: socket)
        return close(socket)
    }
}

@available(*, unavailable)
extension CurlSocketEvents: Sendable {}

/// CURLMOPT_SOCKETFUNCTION for a multi handle whose socket data is a `CurlSocketEvents` (unretained, see there).
let curlSocketCallback: ccurl_socket_callback = { _, socket, what, userp, _ in
    guard let userp else { return 0 }
    return Unmanaged<CurlSocketEvents>.fromOpaque(userp).takeUnretainedValue().socketChanged(socket, what: what)
}

/// CURLMOPT_TIMERFUNCTION for a multi handle whose timer data is a `CurlSocketEvents` (unretained, see there).
let curlTimerCallback: ccurl_timer_callback = { _, milliseconds, userp in
    guard let userp else { return -1 }
    Unmanaged<CurlSocketEvents>.fromOpaque(userp).takeUnretainedValue().timerChanged(milliseconds: milliseconds)
    return 0
}

/// CURLOPT_OPENSOCKETFUNCTION for easy handles driven by a multi handle whose socket data is `clientp`, a
/// `CurlSocketEvents` (unretained, see there).
let curlOpenSocketCallback: ccurl_opensocket_callback = { clientp, _, address in
    guard let clientp, let address else { return CURL_SOCKET_BAD }
    return Unmanaged<CurlSocketEvents>.fromOpaque(clientp).takeUnretainedValue().openSocket(address)
}

/// CURLOPT_CLOSESOCKETFUNCTION for easy handles driven by a multi handle whose socket data is `clientp`, a
/// `CurlSocketEvents` (unretained, see there; a connection keeps the functions and data of the handle that opened
/// it, and curl_multi_cleanup closes the cached ones while the multi handle still holds the context).
let curlCloseSocketCallback: ccurl_closesocket_callback = { clientp, socket in
    guard let clientp else { return close(socket) }
    return Unmanaged<CurlSocketEvents>.fromOpaque(clientp).takeUnretainedValue().closeSocket(socket)
}
