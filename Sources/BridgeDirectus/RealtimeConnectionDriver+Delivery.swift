import BridgeEvents
import BridgeJSON
import BridgeSystem

// Turning a subscription frame into event lines: the socket reader's work for nearly every frame.
extension RealtimeConnectionDriver {
    /// Appends the events of one subscription frame to `read`; `firstItemMember` is what its decoding noted.
    func deliver(
        _ message: DirectusServerMessage,
        firstItemMember: JSONFirstMember?,
        bytes: UnsafeRawBufferPointer,
        route: DeliveryRoute,
        event: ChangeEvent,
        receivedAt: Timestamp,
        into read: inout ReadEvents
    ) {
        guard route.passes(event) else { return }
        let elements: JSONRangeList
        switch message.data {
        case .array(let ranges): elements = ranges
        case .object(let range), .scalar(let range): elements = [range]
        case .absent: elements = []
        }
        if event == .update, let trigger {
            let keys = elements.compactMap {
                $0.key(named: route.primaryKey, first: firstItemMember, in: bytes)
            }
            trigger.updateSeen(collection: route.collection, keys: keys, delivered: !route.triggers)
        }
        if route.triggers {
            trigger?.changeSeen(collection: route.collection)
            return
        }
        for element in elements {
            let key: String?
            let data: JSONRange?
            if event == .delete {
                key = element.keyString(in: bytes)  // §5.3: raw keys, strings or numbers
                data = nil
            } else {
                // From the member the decoder noted when it is the key (no second scan of the item).
                key = element.key(named: route.primaryKey, first: firstItemMember, in: bytes)
                data = element
            }
            guard let key else {
                lostItemWithoutKey(route)
                continue
            }
            let identifier = EventIdentifier.live(read.ids.next(at: receivedAt))
            // The line's fields: the read's one `EventLineFields`, set field by field. A new value for each event was
            // copied once more and destroyed twice around the writer's call, and copied again into its event (those
            // copies and destructions were 6 % of the socket reader in perf record).
            read.fields.identifier = identifier
            read.fields.event = event
            read.fields.collection = route.collection
            read.fields.key = key
            read.fields.time = receivedAt
            read.fields.receivedAt = receivedAt
            read.fields.subscription = route.uid
            // Into the read's one buffer, each line followed by its newline: no allocation per event. The event's
            // body is its range of the buffer once the read is done (`sealLines`).
            EventLineWriter.append(
                read.fields,
                data: data,
                delta: nil,
                in: bytes,
                newline: true,
                timeMemo: &read.timeMemo,
                to: &read.lines
            )
            read.lineEnds.append(read.lines.count - 1)
            // From the same parts as the line's fields, not from them (see above).
            read.events.append(
                EncodedEvent(
                    identifier: identifier,
                    event: event,
                    collection: route.collection,
                    key: key,
                    origin: .live,
                    seq: nil,
                    time: receivedAt,
                    receivedAt: receivedAt,
                    subscription: route.uid,
                    body: EventBody([])
                )
            )
        }
    }
}

/// What the events of one socket read are made with, held in a local while the read is handled.
struct ReadEvents {
    /// The events so far (offered to the sinks after the read); the bodies of the last `lineEnds.count` are set by
    /// `sealLines`.
    var events: [EncodedEvent]
    /// The ids' generator (kept across reads).
    var ids: UUIDv7Generator
    /// The lines written so far, each followed by a newline (a scratch buffer kept across reads).
    var lines: [UInt8]
    /// Where each line of `lines` ends (the index of its newline; kept across reads for its capacity).
    var lineEnds: [Int]
    /// The text of the receipt time, which every event of the read shares: formatted once per read.
    var timeMemo = RFC3339Memo()
    /// The fields of the line being written (live: no `seq`, no `user`), reused for every event of the read.
    var fields = EventLineFields(
        identifier: .text(""),
        event: .create,
        collection: "",
        key: "",
        origin: .live,
        seq: nil,
        time: Timestamp(microsecondsSinceEpoch: 0),
        receivedAt: Timestamp(microsecondsSinceEpoch: 0),
        subscription: ""
    )

    /// Gives the events of this read their lines: one buffer holding exactly the lines, shared by their bodies, then
    /// empties the scratch buffers. The queue's byte limit sees the lines, not the buffer's capacity, so the buffer
    /// handed on holds at most half as much again unused (``isSnug(capacity:count:)``).
    ///
    /// When the scratch buffer is that snug (the reads of a busy connection are alike in size) it is itself the
    /// buffer, and the next read's scratch is a fresh one with room for a quarter more than this read: no copy of
    /// the lines (it was 4 % of the socket reader's CPU in perf record at full speed). Otherwise (a read much smaller
    /// than the scratch's capacity) the lines are copied into a buffer of their size and the scratch is kept.
    mutating func sealLines() {
        guard let last = lineEnds.last else { return }
        let size = last + 1
        let sealed: [UInt8]
        if Self.isSnug(capacity: lines.capacity, count: size) {
            sealed = lines
            lines = []
            lines.reserveCapacity(size + size / 4)
        } else {
            sealed = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
                initialized = buffer.initialize(fromContentsOf: lines[...last])
            }
            lines.removeAll(keepingCapacity: true)
        }
        var start = 0
        let first = events.count - lineEnds.count
        for (offset, end) in lineEnds.enumerated() {
            events[first + offset].body = EventBody(sealed, range: start..<end)
            start = end + 1
        }
        lineEnds.removeAll(keepingCapacity: true)
    }

    /// Whether a buffer of `capacity` bytes holding `count` may be handed on as it is: at most half of `count` unused.
    static func isSnug(capacity: Int, count: Int) -> Bool {
        capacity - count <= count / 2
    }
}

/// The fields of a `SubscriptionRoute` that the socket reader uses for every event it delivers.
final class DeliveryRoute {
    /// The subscription's uid, written into its events.
    let uid: String
    /// The subscription's collection.
    let collection: String
    /// The field that holds an item's key.
    let primaryKey: String
    /// Activity mode: events only wake the activity reader.
    let triggers: Bool
    /// One bit per `ChangeEvent` the route passes on.
    private let eventBits: UInt8

    /// The fields of `route`.
    init(_ route: SubscriptionRoute) {
        uid = route.uid
        collection = route.collection
        primaryKey = route.primaryKey
        triggers = route.handling == .trigger
        eventBits = route.events.reduce(0) { $0 | Self.bit($1) }
    }

    /// Whether the route passes `event` on.
    func passes(_ event: ChangeEvent) -> Bool { eventBits & Self.bit(event) != 0 }

    private static func bit(_ event: ChangeEvent) -> UInt8 {
        switch event {
        case .create: 1
        case .update: 2
        case .delete: 4
        case .snapshot: 8
        }
    }
}
