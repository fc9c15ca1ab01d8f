import BridgeActivity
import BridgeCore
import BridgeDirectus
import BridgeEvents
import BridgeJSON
import BridgeSinks
import BridgeSystem

/// A Directus session's frames through `DirectusServerMessage` decoding, the session state machine and the event
/// line writer, as `RealtimeConnectionDriver` runs them.
///
/// Input: steps separated by 0xFF (a byte UTF-8 never holds). A step's first byte chooses what happens: below 200
/// the rest is a frame from the server; otherwise time passes (ticks), the token is refreshed, or shutdown starts.
///
/// Invariants:
/// - Decoding agrees with the tree parser: a frame is refused as invalid JSON exactly when `JSONValue.parse`
///   refuses it; otherwise `type`, `event`, `status`, `uid`, `error`, `refresh_token` and every `data` range
///   match the tree (the last of repeated members, as in the tree).
/// - A frame refused for anything but invalid JSON, or accepted, is valid UTF-8 (the socket reader leaves a text
///   frame's UTF-8 check to this decoder).
/// - Every item of a change event, written by `EventLineWriter` with the frame's uid as subscription, is one line of
///   valid JSON whose `data`, `key` and `subscription` read back as the frame had them; the key read from the member
///   the decoder noted is the lookup's.
/// - The state machine only names subscriptions it has, sends only valid JSON, and says it is closed exactly when
///   it asked to close (the driver then stops reading, and so does the target).
enum DirectusMessageTarget {
    static let target = FuzzTarget(
        name: "directus-message",
        summary: "Directus frames: decoder agrees with the tree, event lines read back, session state machine",
        run: run
    )

    static let subscriptions = ["s1", "s2"].map { uid in
        RealtimeSessionStateMachine.Subscription(
            uid: uid,
            collection: "posts",
            subscribeMessage: #"{"type":"subscribe","collection":"posts","uid":"\#(uid)"}"#
        )
    }

    static func run(_ bytes: UnsafeRawBufferPointer) {
        let start = ContinuousClock.now
        var now = start
        var session = RealtimeSessionStateMachine(
            subscriptions: subscriptions,
            authMode: .handshake,
            heartbeat: .seconds(25),
            unsubscribeTimeout: .seconds(5),
            now: now
        )
        var closed = false
        func perform(_ actions: [RealtimeSessionStateMachine.Action]) {
            for action in actions {
                switch action {
                case .send(let text):
                    require(JSONScanner.isValid(Array(text.utf8)), "the session sent invalid JSON: \(text)")
                case .subscriptionLive(let index), .subscriptionFailed(let index, _, _), .deliverEvent(let index, _):
                    require(subscriptions.indices.contains(index), "subscription index \(index) out of range")
                case .close:
                    closed = true
                default:
                    break
                }
            }
            require(closed == session.isClosed, "close action and isClosed disagree")
        }
        perform(session.connected(accessToken: "token\u{1}\"", now: now))

        for step in Array(bytes).split(separator: 0xFF, omittingEmptySubsequences: false) where !closed {
            let kind = step.first ?? 0
            switch kind {
            case 200..<230:
                now += .seconds(Int(kind - 199) * 5)
                perform(session.tick(now: now))
            case 230..<250:
                perform(session.tokenRefreshed(accessToken: String(decoding: step.dropFirst(), as: UTF8.self)))
            case 250...:
                perform(session.shutdownRequested(now: now))
            default:
                let frame = Array(step.dropFirst())
                guard let message = decode(frame) else { continue }
                let inbound = RealtimeConnectionDriver.inbound(message)
                let actions = session.received(inbound, now: now)
                perform(actions)
                for case .deliverEvent(_, let event) in actions {
                    checkLines(message, frame: frame, event: event, receivedAt: Timestamp(microsecondsSinceEpoch: 0))
                }
            }
        }
    }

    /// Decodes `frame` and checks the result against the tree parser.
    static func decode(_ frame: [UInt8]) -> DirectusServerMessage? {
        let tree = try? JSONValue.parse(frame)
        let decoded = Result { () throws(DirectusMessageError) in try DirectusServerMessage(decoding: frame) }
        let isUTF8 = String(validating: frame, as: UTF8.self) != nil
        let message: DirectusServerMessage
        switch decoded {
        case .failure(.invalidJSON):
            require(tree == nil, "the decoder refused JSON the parser read")
            return nil
        case .failure:
            require(tree != nil, "the decoder read JSON the parser refused")
            require(isUTF8, "the decoder read a frame that is not UTF-8")
            return nil
        case .success(let value):
            require(isUTF8, "the decoder accepted a frame that is not UTF-8")
            message = value
        }
        guard case .object(let object)? = tree else {
            fatalError("invariant broken: a decoded message that is not a JSON object")
        }
        require(object["type"]?.stringValue.map(DirectusMessageType.init(rawValue:)) == message.type, "type differs")
        require(
            object["event"]?.stringValue.map(DirectusEvent.init(rawValue:)) == message.event,
            "event differs"
        )
        require(
            object["status"]?.stringValue.map(DirectusStatus.init(rawValue:)) == message.status,
            "status differs"
        )
        switch object["uid"] {
        case .string(let text)?: require(message.uid == text, "uid differs")
        case .number(let number)?: require(message.uid == number.text, "numeric uid differs")
        default: require(message.uid == nil, "uid without a string or number")
        }
        if case .object(let error)? = object["error"] {
            require(message.error?.code == error["code"]?.stringValue, "error.code differs")
            require(message.error?.message == error["message"]?.stringValue, "error.message differs")
        }
        switch (message.data, object["data"]) {
        case (.absent, nil):
            break
        case (.array(let ranges), .array(let elements)?):
            require(ranges.count == elements.count, "data: \(ranges.count) ranges, \(elements.count) elements")
            for (range, element) in zip(ranges, elements) {
                require((try? JSONValue.parse(range, in: frame)) == element, "a data range differs")
            }
        case (.object(let range), let value?), (.scalar(let range), let value?):
            require((try? JSONValue.parse(range, in: frame)) == value, "the data range differs")
        default:
            fatalError("invariant broken: data \(message.data) against \(String(describing: object["data"]))")
        }
        return message
    }

    /// Writes the event lines of a change message's items as the driver does (key from `id`, raw keys for deletes)
    /// and reads them back.
    static func checkLines(_ message: DirectusServerMessage, frame: [UInt8], event: ChangeEvent, receivedAt: Timestamp)
    {
        let elements: JSONRangeList
        switch message.data {
        case .array(let ranges): elements = ranges
        case .object(let range), .scalar(let range): elements = [range]
        case .absent: elements = []
        }
        var timeMemo = RFC3339Memo()
        var firstItemMember: JSONFirstMember?
        let again = frame.withUnsafeBytes {
            try? DirectusServerMessage(decoding: $0, firstItemMember: &firstItemMember)
        }
        require(again == message, "the decoding that notes the first item's member differs")
        for element in elements {
            let data = event == .delete ? nil : element
            let key: String?
            if event == .delete {
                key = element.keyString(in: frame)
            } else {
                // As the driver reads it: from the member the decoder noted when that is the key.
                key = element.key(named: "id", first: firstItemMember, in: frame)
                require(key == element.member("id", in: frame)?.keyString(in: frame), "the noted key differs")
            }
            guard let key else { continue }
            let fields = EventLineFields(
                identifier: .text("evt_1"),
                event: event,
                collection: "posts",
                key: key,
                origin: .live,
                seq: nil,
                time: receivedAt,
                receivedAt: receivedAt,
                subscription: message.uid ?? "",
                user: nil
            )
            var line: [UInt8] = []
            EventLineWriter.append(
                fields,
                data: data,
                delta: nil,
                in: frame,
                newline: true,
                timeMemo: &timeMemo,
                to: &line
            )
            require(line.last == 0x0A && line.dropLast().allSatisfy { $0 != 0x0A }, "not exactly one line")
            guard case .object(let written)? = try? JSONValue.parse(Array(line.dropLast())) else {
                fatalError("invariant broken: an event line that is not a JSON object: \(line)")
            }
            let expectedData = data.flatMap { try? JSONValue.parse($0, in: frame) } ?? .null
            require(written["data"] == expectedData, "the line's data differs from the frame's item")
            require(written["key"]?.stringValue == key, "the line's key differs")
            require(written["subscription"]?.stringValue == message.uid ?? "", "the line's subscription differs")
        }
    }
}
