package import BridgeEvents

// The machine's vocabulary: what it is given (subscriptions, the auth mode) and what it asks the driver to do.
extension RealtimeSessionStateMachine {
    /// One subscription to establish on this connection.
    package struct Subscription: Sendable, Equatable {
        /// The socket uid (starts with the configured subscription uid).
        package var uid: String
        /// The collection, for log lines.
        package var collection: String
        /// The complete `subscribe` message text.
        package var subscribeMessage: String

        /// Creates a subscription description.
        package init(uid: String, collection: String, subscribeMessage: String) {
            self.uid = uid
            self.collection = collection
            self.subscribeMessage = subscribeMessage
        }
    }

    /// How the socket authenticates (`directus.auth.mode`).
    package enum AuthMode: Sendable, Equatable {
        /// An `auth` message first, then wait for `auth ok` (docs/directus-protocol.md §2.2).
        case handshake
        /// The token rode on the upgrade URL; no message exchange (§2.4).
        case strict
        /// No authentication (§2.1 step 5).
        case publicAccess
    }

    /// What the driver must do.
    package enum Action: Sendable, Equatable {
        /// Send this text frame.
        case send(String)
        /// A subscription's `init` arrived: it is live now.
        case subscriptionLive(index: Int)
        /// Directus refused a subscription (attributed by order; see type docs).
        case subscriptionFailed(index: Int, code: String, message: String)
        /// A change event arrived for subscription `index`; the driver reads the items from the frame.
        case deliverEvent(index: Int, event: ChangeEvent)
        /// Every subscription got an answer (live or failed): the connection is established.
        case established
        /// The access token expired on the socket: get a fresh one now and call `tokenRefreshed`.
        case refreshTokenNow
        /// An in-band re-authentication succeeded.
        case reauthenticated
        /// Close the connection (with 1000 when `clean`) and report `reason`.
        case close(reason: CloseReason)
        /// A message over the socket's size limit was read past outside a subscribe: the events it carried are lost
        /// (live mode: counted for every sink; activity mode reads them from the activity log).
        case messageLost
        /// Something worth a log line that changes nothing (an unexpected error envelope).
        case logUnexpected(type: String, code: String, message: String)
    }

    /// Why the state machine ends a connection.
    package enum CloseReason: Sendable, Equatable {
        /// Shutdown completed: every subscription unsubscribed.
        case shutdown
        /// Shutdown, and the peer did not acknowledge the unsubscribes in time: it will not answer a close either (a
        /// peer that stopped answering, or one inside an endless message, where its close frame cannot come), so
        /// the connection is ended without waiting for one.
        case shutdownUnanswered
        /// No traffic for `deadAfter`.
        case heartbeatTimeout
        /// The handshake `auth` was refused (credentials or token no longer valid).
        case authenticationFailed(message: String)
        /// The server gave up waiting for re-authentication after TOKEN_EXPIRED (it closes next).
        case authenticationTimedOut
    }
}
