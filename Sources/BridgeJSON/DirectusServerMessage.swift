/// One message the Directus realtime server sent (one WebSocket text frame), decoded without copying item bytes.
///
/// Only the envelope fields the bridge acts on are decoded into values; `data` is described by byte ranges into the
/// frame, so the caller must keep the frame's bytes while it uses them (see ``DirectusMessageData``).
/// Shapes (directus-protocol.md §3, §5.3): `{"type":"subscription","event":"create","data":[{…}],"uid":"s1"}`,
/// `{"type":"auth","status":"ok"}`, `{"type":"ping"}`,
/// `{"type":"subscribe","status":"error","error":{"code":"FORBIDDEN","message":"…"}}`.
public struct DirectusServerMessage: Sendable, Hashable {
    /// `type`: the message kind, or the context of an error.
    public var type: DirectusMessageType
    /// `event` of subscription messages (`init`, `create`, `update`, `delete`, `unsubscribe`).
    public var event: DirectusEvent?
    /// `status` of replies (`ok` or `error`).
    public var status: DirectusStatus?
    /// `uid` as text: a string as sent, a number as written (`5` → `"5"`). `nil` when absent or `null`.
    public var uid: String?
    /// `error` of `status:error` envelopes.
    public var error: DirectusErrorPayload?
    /// Where `data` sits in the frame.
    public var data: DirectusMessageData

    /// Creates a message from decoded parts (tests and emulators; the bridge decodes frames).
    public init(
        type: DirectusMessageType,
        event: DirectusEvent? = nil,
        status: DirectusStatus? = nil,
        uid: String? = nil,
        error: DirectusErrorPayload? = nil,
        data: DirectusMessageData = .absent
    ) {
        self.type = type
        self.event = event
        self.status = status
        self.uid = uid
        self.error = error
        self.data = data
    }
}

/// Where a message's `data` is, as ranges into the frame it was decoded from.
public enum DirectusMessageData: Sendable, Hashable {
    /// No `data` key (e.g. `init` of a subscription with an `event` filter, `ping`, `auth`).
    case absent
    /// An array: the range of each element (items for init/create/update, raw keys for delete).
    case array(JSONRangeList)
    /// An object (item subscriptions: one item for init/create/update).
    case object(JSONRange)
    /// A string, number, boolean or `null` (item subscriptions: the deleted key).
    case scalar(JSONRange)
}

/// The `error` object of an error envelope: `{"code":"FORBIDDEN","message":"…"}`.
public struct DirectusErrorPayload: Sendable, Hashable {
    /// `error.code`, e.g. `AUTH_FAILED`, `TOKEN_EXPIRED`, `INVALID_PAYLOAD`, `FORBIDDEN`.
    public var code: String?
    /// `error.message`, human-readable.
    public var message: String?

    /// Creates a payload.
    public init(code: String?, message: String?) {
        self.code = code
        self.message = message
    }
}

/// Why a frame is not a usable Directus message. Never retriable: the same bytes fail the same way.
public enum DirectusMessageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The frame is not valid JSON.
    case invalidJSON(JSONSyntaxError)
    /// Valid JSON, but not an object.
    case notAnObject
    /// An object without a string `type`.
    case missingType
    /// A known field with the wrong JSON type (e.g. `"uid":{}`); the associated value names it (`error.code`).
    case invalidField(String)

    /// Always `false`: a malformed message does not get better by asking again.
    public var isRetriable: Bool { false }

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .invalidJSON(let error): return "Directus message: \(error)"
        case .notAnObject: return "Directus message: not a JSON object"
        case .missingType: return "Directus message: no string \"type\""
        case .invalidField(let name): return "Directus message: field \"\(name)\" has the wrong type"
        }
    }
}
