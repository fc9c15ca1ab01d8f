/// The connection-level protocol state (RFC 6455 §5.5, §7): answering pings, the close handshake in both
/// directions, and turning protocol errors into the right close. Pure: each event returns the action the
/// connection performs after releasing its lock.
package struct WebSocketStateMachine: Sendable {
    /// Where the connection is in its life.
    package enum State: Sendable, Equatable {
        /// Data flows both ways.
        case open
        /// We sent a close frame and wait for the peer's.
        case closeSent
        /// Nothing more is sent or received; `terminalError` says why.
        case closed
    }

    /// What the connection must do.
    package enum Action: Sendable, Equatable {
        /// Nothing.
        case none
        /// Answer a ping with a pong carrying the same payload.
        case sendPong([UInt8])
        /// Send a close frame (`code` nil: an empty close payload) and keep reading until the peer's close.
        case sendClose(code: UInt16?, reason: String)
        /// Send a close frame (best effort) and shut the TCP connection down.
        case sendCloseAndShutdown(code: UInt16?, reason: String)
        /// Shut the TCP connection down.
        case shutdown
    }

    /// Where the connection is.
    package private(set) var state: State = .open
    /// The peer's close (or 1006), once known: what `close()` reports.
    package private(set) var peerClose: WebSocketCloseInfo?
    /// What readers and writers get once the connection is closed.
    package private(set) var terminalError: WebSocketError?

    /// Creates an open connection's state.
    package init() {}

    // MARK: - Events from the peer

    /// A complete control frame arrived.
    package mutating func receivedControl(_ frame: ControlFrame) -> Action {
        switch frame.opcode {
        case .ping:
            return state == .open ? .sendPong(frame.payload) : .none
        case .close:
            return receivedClose(payload: frame.payload)
        default:
            return .none  // pongs need no answer; unsolicited ones are allowed (RFC 6455 §5.5.3)
        }
    }

    private mutating func receivedClose(payload: [UInt8]) -> Action {
        guard state != .closed else { return .none }
        let info: WebSocketCloseInfo
        switch payload.count {
        case 0:
            info = WebSocketCloseInfo(code: CloseCode.noStatusReceived)
        case 1:
            return receivedProtocolError(.protocolError("close frame with a 1-byte payload"))
        default:
            let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
            guard CloseCode.isValidOnWire(code) else {
                return receivedProtocolError(.protocolError("invalid close code \(code)"))
            }
            let reason = payload[2...]
            guard reason.withUnsafeBytes({ UTF8Validator.isValid($0) }) else {
                return receivedProtocolError(.invalidUTF8)
            }
            info = WebSocketCloseInfo(code: code, reason: String(decoding: reason, as: UTF8.self))
        }
        let wasOpen = state == .open
        peerClose = info
        state = .closed
        terminalError = .closed(info)
        // Answer the peer's close by echoing its code (an empty close when it sent none, as 1005 is never sent).
        return wasOpen ? .sendCloseAndShutdown(code: payload.isEmpty ? nil : info.code, reason: "") : .shutdown
    }

    /// The decoder found a protocol violation (or an oversized message).
    package mutating func receivedProtocolError(_ error: WebSocketProtocolError) -> Action {
        guard state != .closed else { return .none }
        let wasOpen = state == .open
        state = .closed
        peerClose = peerClose ?? .abnormal
        terminalError = .violation(error)
        return wasOpen ? .sendCloseAndShutdown(code: error.closeCode, reason: error.reason) : .shutdown
    }

    /// The stream ended or failed without a close frame (or a write failed, or the close wait timed out).
    package mutating func connectionDropped(underlying: (any Error & Sendable)? = nil) -> Action {
        guard state != .closed else { return .none }
        state = .closed
        peerClose = .abnormal
        var error = WebSocketError.closed(.abnormal)
        error.underlying = underlying
        terminalError = error
        return .shutdown
    }

    // MARK: - Events from the application

    /// The application closes with `code` and `reason`.
    package mutating func sendClose(code: UInt16, reason: String) -> Action {
        guard state == .open else { return .none }
        state = .closeSent
        return .sendClose(code: code, reason: reason)
    }

    /// Whether data frames may be sent; the error to throw otherwise.
    package func checkCanSend() throws(WebSocketError) {
        switch state {
        case .open: return
        case .closeSent: throw WebSocketError(.closed, "the connection is closing", closeCode: nil)
        case .closed: throw terminalError ?? .closed(.abnormal)
        }
    }

    /// The payload of a close frame: the code in network order and the reason, cut to fit 125 bytes on a
    /// character boundary.
    package static func closePayload(code: UInt16?, reason: String) -> [UInt8] {
        guard let code else { return [] }
        var payload = [UInt8(code >> 8), UInt8(code & 0xFF)]
        var reasonBytes = Array(reason.utf8.prefix(123))
        while !UTF8Validator.isValid(reasonBytes) { reasonBytes.removeLast() }
        payload += reasonBytes
        return payload
    }
}
