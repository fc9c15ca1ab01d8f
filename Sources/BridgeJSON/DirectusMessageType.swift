/// The `type` of a Directus server message. Known values decode without allocating.
public enum DirectusMessageType: Sendable, Hashable {
    /// `subscription`: init, create, update, delete events and unsubscribe acknowledgements.
    case subscription
    /// `auth`: replies to authentication and token expiry notices.
    case auth
    /// `ping`: the server's heartbeat; answer with `{"type":"pong"}`.
    case ping
    /// `pong`: the answer to the client's own ping.
    case pong
    /// `subscribe`: the context of subscribe errors.
    case subscribe
    /// `unsubscribe`: the context of unsubscribe errors.
    case unsubscribe
    /// `items`: replies to item requests over the socket.
    case items
    /// `server`: the context of errors about the frame itself (invalid payload, rate limit).
    case server
    /// Any other type (e.g. `license` on newer servers), as sent.
    case other(String)

    /// Maps the wire text to a case.
    public init(rawValue: String) {
        var text = rawValue
        self = text.withUTF8 { Self(utf8: $0) }
    }

    /// The wire text.
    public var rawValue: String {
        switch self {
        case .subscription: return "subscription"
        case .auth: return "auth"
        case .ping: return "ping"
        case .pong: return "pong"
        case .subscribe: return "subscribe"
        case .unsubscribe: return "unsubscribe"
        case .items: return "items"
        case .server: return "server"
        case .other(let text): return text
        }
    }

    /// Maps wire bytes to a case without allocating for the known ones.
    init(utf8 text: UnsafeBufferPointer<UInt8>) {
        if text.matches("subscription") {
            self = .subscription
        } else if text.matches("ping") {
            self = .ping
        } else if text.matches("pong") {
            self = .pong
        } else if text.matches("auth") {
            self = .auth
        } else if text.matches("subscribe") {
            self = .subscribe
        } else if text.matches("unsubscribe") {
            self = .unsubscribe
        } else if text.matches("items") {
            self = .items
        } else if text.matches("server") {
            self = .server
        } else {
            self = .other(String(decoding: text, as: UTF8.self))
        }
    }
}

/// The `event` of a subscription message.
public enum DirectusEvent: Sendable, Hashable {
    /// `init`: the initial state after subscribing.
    case initial
    /// `create`: one created item per message.
    case create
    /// `update`: the updated items, as read after the change.
    case update
    /// `delete`: the deleted keys, as passed to the delete.
    case delete
    /// `unsubscribe`: the acknowledgement of an unsubscribe request.
    case unsubscribe
    /// Any other event, as sent.
    case other(String)

    /// Maps the wire text to a case.
    public init(rawValue: String) {
        var text = rawValue
        self = text.withUTF8 { Self(utf8: $0) }
    }

    /// The wire text (`init` for ``initial``).
    public var rawValue: String {
        switch self {
        case .initial: return "init"
        case .create: return "create"
        case .update: return "update"
        case .delete: return "delete"
        case .unsubscribe: return "unsubscribe"
        case .other(let text): return text
        }
    }

    /// Maps wire bytes to a case without allocating for the known ones.
    init(utf8 text: UnsafeBufferPointer<UInt8>) {
        if text.matches("create") {
            self = .create
        } else if text.matches("update") {
            self = .update
        } else if text.matches("delete") {
            self = .delete
        } else if text.matches("init") {
            self = .initial
        } else if text.matches("unsubscribe") {
            self = .unsubscribe
        } else {
            self = .other(String(decoding: text, as: UTF8.self))
        }
    }
}

/// The `status` of a reply.
public enum DirectusStatus: Sendable, Hashable {
    /// `ok`.
    case ok
    /// `error`: the message carries an ``DirectusErrorPayload``.
    case error
    /// Any other status, as sent.
    case other(String)

    /// Maps the wire text to a case.
    public init(rawValue: String) {
        var text = rawValue
        self = text.withUTF8 { Self(utf8: $0) }
    }

    /// The wire text.
    public var rawValue: String {
        switch self {
        case .ok: return "ok"
        case .error: return "error"
        case .other(let text): return text
        }
    }

    /// Maps wire bytes to a case without allocating for the known ones.
    init(utf8 text: UnsafeBufferPointer<UInt8>) {
        if text.matches("ok") {
            self = .ok
        } else if text.matches("error") {
            self = .error
        } else {
            self = .other(String(decoding: text, as: UTF8.self))
        }
    }
}

extension UnsafeBufferPointer<UInt8> {
    /// Whether these bytes are exactly `literal`'s UTF-8.
    @inline(__always)
    func matches(_ literal: StaticString) -> Bool {
        guard count == literal.utf8CodeUnitCount else { return false }
        guard let base = baseAddress else { return count == 0 }
        return memoryEqual(base, literal.utf8Start, count)
    }
}
