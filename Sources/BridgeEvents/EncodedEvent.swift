public import BridgeJSON
public import BridgeSystem

public typealias ChangeEvent = EventLineFields.Event

/// Where an event came from (`live`, `backfill`, `snapshot`); shared with the event-line writer.
public typealias EventOrigin = EventLineFields.Origin

/// One change of one item, already encoded as the event line's JSON object.
///
/// The body is built once (on the socket reader or the activity reader) and shared by every sink: the NDJSON sink
/// writes it with a newline (a socket read's lines as they lie, see ``EventBody``), the webhook sink uses it as the
/// request body. The other fields are what sinks route, order and store by.
public struct EncodedEvent: Sendable, Equatable {
    /// The event id (`act_<activity id>[_<uid>]`, `evt_<uuidv7>`, `snap_<collection>_<key>_<watermark>[_<uid>]`;
    /// see ``EventID``); a live id is held as its UUID, so that the socket reader allocates no string per event.
    public var identifier: EventIdentifier
    /// The change.
    public var event: ChangeEvent
    /// The collection.
    public var collection: String
    /// The item's primary key as text.
    public var key: String
    /// Where it came from.
    public var origin: EventOrigin
    /// The activity id, when known.
    public var seq: Int64?
    /// When the change happened (activity timestamp, else receipt time).
    public var time: Timestamp
    /// When the bridge received it.
    public var receivedAt: Timestamp
    /// The configured subscription uid.
    public var subscription: String
    /// The event line's JSON object, without a trailing newline (from the socket reader, a range of the buffer that
    /// holds its read's lines).
    public var body: EventBody

    /// The event id as text (rendered on each call for a live id: sinks that need it as bytes read ``identifier``).
    public var id: String {
        get { identifier.description }
        set { identifier = .text(newValue) }
    }

    /// The event whose line `body` was written from `fields` (the routing fields are taken from them).
    public init(fields: EventLineFields, body: [UInt8]) {
        self.init(fields: fields, body: EventBody(body))
    }

    /// The event whose line `body` was written from `fields` (the routing fields are taken from them).
    /// `fields` is consumed: a caller done with them hands them over.
    public init(fields: consuming EventLineFields, body: EventBody) {
        self.init(
            identifier: fields.identifier,
            event: fields.event,
            collection: fields.collection,
            key: fields.key,
            origin: fields.origin,
            seq: fields.seq,
            time: fields.time,
            receivedAt: fields.receivedAt,
            subscription: fields.subscription,
            body: body
        )
    }

    /// Creates an event.
    public init(
        id: String,
        event: ChangeEvent,
        collection: String,
        key: String,
        origin: EventOrigin,
        seq: Int64?,
        time: Timestamp,
        receivedAt: Timestamp,
        subscription: String,
        body: [UInt8]
    ) {
        self.init(
            identifier: .text(id),
            event: event,
            collection: collection,
            key: key,
            origin: origin,
            seq: seq,
            time: time,
            receivedAt: receivedAt,
            subscription: subscription,
            body: EventBody(body)
        )
    }

    /// Creates an event whose id is `identifier`.
    public init(
        identifier: EventIdentifier,
        event: ChangeEvent,
        collection: String,
        key: String,
        origin: EventOrigin,
        seq: Int64?,
        time: Timestamp,
        receivedAt: Timestamp,
        subscription: String,
        body: EventBody
    ) {
        self.identifier = identifier
        self.event = event
        self.collection = collection
        self.key = key
        self.origin = origin
        self.seq = seq
        self.time = time
        self.receivedAt = receivedAt
        self.subscription = subscription
        self.body = body
    }
}

/// Events handed to the sinks together, and the activity-log progress they complete.
///
/// A sink's runner records `progress` in the sink's cursor only after the sink made every event of the batch
/// durable: at-least-once, never at-most-once.
public struct EventBatch: Sendable {
    /// The events, in order.
    public var events: [EncodedEvent]
    /// What to record in the cursor store once the events are accepted (activity mode), or nil.
    public var progress: ActivityProgress?
    /// Monotonic time the batch's source frame arrived (latency measurement).
    public var receivedAt: ContinuousClock.Instant
    /// Whether a sink that is full may drop the batch (counted and logged) instead of waiting at its cursor: only
    /// what the socket reader *offers* in live mode. Everything an activity reader hands over — backfill, live
    /// changes it confirms, and every page of a snapshot or resync, whose progress is only its place in the snapshot — must
    /// wait (contract, "The delivery guarantee, per mode"). Explicit, never inferred from `progress`: a snapshot
    /// page without progress once passed for a live batch and was dropped.
    public var mayDrop: Bool

    /// Creates a batch that waits when its sink is full; the socket reader's live batches say `mayDrop: true`.
    public init(
        events: [EncodedEvent],
        progress: ActivityProgress? = nil,
        receivedAt: ContinuousClock.Instant = .now,
        mayDrop: Bool = false
    ) {
        self.events = events
        self.progress = progress
        self.receivedAt = receivedAt
        self.mayDrop = mayDrop
    }
}
