package import BridgeEvents
internal import BridgeJSON

/// A pending delivery as the delivery service schedules it (everything but the body). Times are Unix ms.
package struct OutboxEntry: Sendable, Equatable {
    /// The outbox row id; increases with acceptance order (AUTOINCREMENT, never reused).
    package var seq: Int64
    /// The event's collection.
    package var collection: String
    /// The item's primary key as text.
    package var key: String
    /// Attempts made so far.
    package var attempts: Int
    /// When the next attempt may start.
    package var nextAttemptAt: Int64
    /// When the event entered the outbox.
    package var createdAt: Int64

    /// Creates an entry.
    package init(seq: Int64, collection: String, key: String, attempts: Int, nextAttemptAt: Int64, createdAt: Int64) {
        self.seq = seq
        self.collection = collection
        self.key = key
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.createdAt = createdAt
    }

    /// The ordering group of the entry: `collection` + NUL + `key`.
    package var itemKey: String { collection + "\u{0}" + key }
}

/// What an attempt needs from the outbox: the webhook id and the body, exactly as accepted.
package struct OutboxPayload: Sendable, Equatable {
    /// The outbox row id.
    package var seq: Int64
    /// The event id (`webhook-id`).
    package var eventID: String
    /// The event object (the request body).
    package var body: [UInt8]
}

/// A row the outbox just committed, as intake hands it to delivery in memory (`OutboxHandOff`): its schedule and
/// its payload, the body shared with the accepted event (no copy). Delivery reads a row back from SQLite only when
/// it never got this (a restart, a replay, a full hand-off).
package struct OutboxRecord: Sendable {
    /// The row as the delivery service schedules it: no attempts yet, due at once.
    package var entry: OutboxEntry
    /// The event id and the body.
    package var payload: OutboxPayload

    /// Creates the record of row `seq`, committed at `now` (Unix ms).
    package init(seq: Int64, event: EncodedEvent, now: Int64) {
        entry = OutboxEntry(
            seq: seq, collection: event.collection, key: event.key, attempts: 0, nextAttemptAt: now, createdAt: now)
        payload = OutboxPayload(seq: seq, eventID: event.id, body: event.body.bytes)
    }
}

/// A change to the outbox after an attempt, written in the delivery service's next transaction.
package enum OutboxWrite: Sendable, Equatable {
    /// 2xx: the row leaves the outbox.
    case delivered(seq: Int64)
    /// To be tried again at `nextAttemptAt` (Unix ms).
    case retry(seq: Int64, attempts: Int, nextAttemptAt: Int64, lastStatus: Int?, lastError: String?)
    /// The row moves to the dead letters.
    case deadLetter(
        seq: Int64,
        attempts: Int,
        deadAt: Int64,
        reason: String,
        lastStatus: Int?,
        response: [UInt8]
    )
    /// The row leaves the outbox, its dead letter kept elsewhere (filed in the shared bucket).
    case removed(seq: Int64)

    /// The outbox row it changes.
    package var seq: Int64 {
        switch self {
        case .delivered(let seq), .retry(let seq, _, _, _, _), .deadLetter(let seq, _, _, _, _, _), .removed(let seq):
            seq
        }
    }

    /// Whether the row's event was dead-lettered (here or in the shared bucket).
    package var isDeadLetter: Bool {
        switch self {
        case .deadLetter, .removed: true
        case .delivered, .retry: false
        }
    }

    /// Whether the row leaves the outbox.
    package var removesRow: Bool {
        if case .retry = self { return false }
        return true
    }
}

/// A delivery that was given up: the event as it was accepted, and why it failed.
package struct DeadLetter: Sendable, Equatable {
    /// The dead letter's row id.
    package var seq: Int64
    /// The sink it belongs to (`SinkType.identity`: `WebhookSinkType.identity` for a webhook).
    package var sink: String
    /// The event id (`webhook-id`, JetStream's `Nats-Msg-Id`, Kafka's `id` header); replay keeps it.
    package var eventID: String
    /// The collection.
    package var collection: String
    /// The item's primary key as text.
    package var key: String
    /// The event object, byte for byte as accepted.
    package var body: [UInt8]
    /// Attempts made.
    package var attempts: Int
    /// When the event entered the outbox (Unix ms).
    package var createdAt: Int64
    /// When it was dead-lettered (Unix ms).
    package var deadAt: Int64
    /// Why (`HTTP 400 is not retried`, `gave up after 12 attempts; last: HTTP 503`, the broker's refusal).
    package var reason: String
    /// The status of the last answer, nil when the last attempt got none (connection failure, timeout).
    package var lastStatus: Int?
    /// The first KiB of the last answer's body.
    package var response: [UInt8]
    /// The change, for a broker sink's letter (its topic or subject and headers are made from it when the letter
    /// is sent again); nil for a webhook's.
    package var event: ChangeEvent? = nil

    /// The change's name (`create`, `update`, …), nil for a webhook's letter.
    package var eventName: String? { event?.rawValue }
}

/// Which dead letters a `dlq` command acts on; every set condition must hold.
package struct DeadLetterFilter: Sendable, Equatable {
    /// Only this collection.
    package var collection: String?
    /// Only letters dead-lettered at or after this Unix ms.
    package var since: Int64?
    /// Only these event ids (empty: any).
    package var ids: [String]
    /// Only letters of these sink ids (empty: any).
    package var sinks: [String]

    /// Creates a filter; no conditions matches every letter.
    package init(collection: String? = nil, since: Int64? = nil, ids: [String] = [], sinks: [String] = []) {
        self.collection = collection
        self.since = since
        self.ids = ids
        self.sinks = sinks
    }
}
