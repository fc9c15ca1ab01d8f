import BridgeSystem
import CCurl

/// A multi handle driven by socket events (`curl_multi_socket_action`): curl tells a `CurlSocketEvents` which
/// sockets to watch and when its next timer is due, and the owner acts on exactly the sockets that are ready.
///
/// `curl_multi_poll` handed every socket of every transfer (and curl's wake-up pipe) to the kernel on each turn and
/// `curl_multi_perform` then looked at every transfer; here the kernel keeps the set (epoll) and curl is told only
/// of the ready sockets (BENCHMARKS.md, "Webhook @8: a curl_multi_socket_action driver").
extension CurlMultiHandle {
    /// From now on curl reports its sockets and timer to `events`, which this handle keeps until it is freed.
    func driveSockets(_ events: CurlSocketEvents) throws(HTTPClientError) {
        socketEvents = events  // strong: the callbacks' context outlives every call into curl, cleanup included
        let context = Unmanaged.passUnretained(events).toOpaque()
        try check(ccurl_multi_set_socket_callback(raw, curlSocketCallback, context), "CURLMOPT_SOCKETFUNCTION")
        try check(ccurl_multi_set_timer_callback(raw, curlTimerCallback, context), "CURLMOPT_TIMERFUNCTION")
    }

    /// Lets curl act on `socket`, which the epoll set reported with `events`.
    func socketAction(_ socket: Int32, _ events: EventPoll.Events) throws(HTTPClientError) {
        var bits: Int32 = 0
        if events.contains(.readable) { bits |= CURL_CSELECT_IN }
        if events.contains(.writable) { bits |= CURL_CSELECT_OUT }
        if !events.isDisjoint(with: [.error, .hangUp]) { bits |= CURL_CSELECT_ERR }
        var running: Int32 = 0
        try check(curl_multi_socket_action(raw, socket, bits, &running), "curl_multi_socket_action")
    }

    /// Lets curl run what its timer was for: transfers just added, timeouts, connect and retry delays.
    func runTimeouts() throws(HTTPClientError) {
        var running: Int32 = 0
        try check(curl_multi_socket_action(raw, ccurl_socket_timeout, 0, &running), "curl_multi_socket_action")
    }

}
