package import BridgeJSON
package import BridgeEvents

/// A message from Directus's realtime socket, reduced to what the session state machine decides on.
///
/// The driver builds it from the fast JSON decoder's output; item payloads stay in the frame buffer and are handled
/// by the driver when the state machine says `.deliverEvent`.
package enum RealtimeInbound: Sendable, Equatable {
    /// `{"type":"ping"}` — the server's heartbeat; must be answered with `{"type":"pong"}` at once
    /// (docs/directus-protocol.md §4).
    case ping
    /// `{"type":"pong"}` — the answer to our own ping.
    case pong
    /// `{"type":"auth","status":"ok"}` (§2.2, §2.5). A refresh token in it is not read: only socket logins with
    /// email/password or a refresh token get one (§2.3), and the bridge authenticates the socket with an access token.
    case authOK
    /// `{"type":"auth","status":"error"}`: AUTH_FAILED, TOKEN_EXPIRED or AUTH_TIMEOUT (§2, §7.2).
    case authError(code: String, message: String)
    /// `{"type":"subscription","event":"init"}` for `uid` (§5.3).
    case subscriptionInit(uid: String?)
    /// A change event for `uid`: `create`, `update` or `delete` (§5.3).
    case subscriptionEvent(uid: String?, event: ChangeEvent)
    /// `{"type":"subscription","event":"unsubscribe"}` (§5.4).
    case unsubscribed(uid: String?)
    /// An error envelope of type `subscribe` (mostly without uid, §3.1).
    case subscribeError(code: String, message: String, uid: String?)
    /// Any other error envelope (`server`, `items`, …): logged, not fatal.
    case otherError(type: String, code: String, message: String)
    /// A valid message of a type we do not use (ignored, but it is traffic).
    case ignored(type: String)
    /// A message over the socket's size limit, read past unread (`WebSocketOptions.skipsOversizedMessages`).
    case oversized
}

/// The change events (create, update, delete from Directus; snapshot from the bridge). One definition, shared with
/// the event-line writer.

