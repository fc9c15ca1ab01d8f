package import BridgeConfig
import BridgeJSON
package import BridgeSystem

/// How one sink writes each event (`format`, docs/configuration.md "Output format"): the one place every sink
/// type gets its format from.
///
/// The event object is encoded once, where the event is born (`EncodedEvent.body`), and shared by every sink.
/// With `format: event` that body is what the sink gets, untouched: the default path costs nothing. With
/// `format: cloudevents` each body is wrapped in a CloudEvents envelope (``CloudEventWriter``) before the sink's
/// `accept`, so a sink writes whatever bytes it is given and never needs to know the format — except for the
/// content type it announces (a webhook's `content-type`, a broker message's header).
package struct EventEncoder: Sendable {
    /// The sink's format.
    package let format: EventFormat
    private let cloudEvents: CloudEventWriter?

    /// `format: event`: bodies as they are.
    package static let plain = EventEncoder(format: .event, source: "")

    /// An encoder for `format`; `source` (the Directus URL, path included) is every CloudEvent's `source`.
    package init(format: EventFormat, source: String) {
        self.format = format
        cloudEvents = format == .cloudevents ? CloudEventWriter(source: source) : nil
    }

    /// The media type of an encoded event: `application/json`, or `application/cloudevents+json` (structured
    /// mode, as the CloudEvents HTTP and Kafka bindings name it, so receivers and SDKs recognise it).
    package var contentType: String {
        switch format {
        case .event: "application/json"
        case .cloudevents: "application/cloudevents+json"
        }
    }

    /// `events` as the sink writes them: unchanged for `format: event`, else each body wrapped.
    package func encode(_ events: [EncodedEvent]) -> [EncodedEvent] {
        guard let cloudEvents else { return events }
        return events.map { event in
            var encoded = event
            encoded.body = EventBody(Self.envelope(of: event, writer: cloudEvents))
            return encoded
        }
    }

    /// `body` of an event that is not an item's change (`check --send-test-event`), with its own `type`.
    package func encode(body: [UInt8], id: String, type: String, subject: String, time: Timestamp) -> [UInt8] {
        guard let cloudEvents else { return body }
        var envelope: [UInt8] = []
        envelope.reserveCapacity(body.count + 256)
        cloudEvents.append(id: id, type: type, subject: subject, time: time, data: body[...], to: &envelope)
        return envelope
    }

    private static func envelope(of event: EncodedEvent, writer: CloudEventWriter) -> [UInt8] {
        var envelope: [UInt8] = []
        envelope.reserveCapacity(event.body.count + 256 + event.id.utf8.count + event.key.utf8.count)
        writer.append(
            id: event.id, type: event.event.typeName,
            subject: CloudEventWriter.subject(collection: event.collection, key: event.key), time: event.time,
            data: event.body.slice, to: &envelope)
        return envelope
    }
}
