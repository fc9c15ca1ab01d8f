import BridgeConfig
import BridgeSystem
@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeSinks
import Foundation
import Testing

/// A sink that keeps the bodies it was given.
private final class BodySink: SinkConnector, @unchecked Sendable {
    let name: String
    var bodies: [[UInt8]] = []
    init(name: String) { self.name = name }
    func accept(_ events: [EncodedEvent]) async throws(SinkError) { bodies += events.map(\.body.bytes) }
    func close() async throws(SinkError) {}
}

/// `format` per sink: each sink's runner hands it the events in its own format, from one encoded body.
@Suite struct EventEncoderTests {
    @Test func eachSinkGetsItsFormatAndTheDefaultGetsTheBodyUntouched() async throws {
        let plain = BodySink(name: "plain")
        let cloud = BodySink(name: "cloud")
        let encoder = EventEncoder(format: .cloudevents, source: "https://cms.example.com/cms")
        var update = makeEvent(42, event: .update)
        update.time = Timestamp(rfc3339: "2026-12-02T10:15:00.123Z")!
        let batch = EventBatch(events: [makeEvent(1), update])
        let registry = MetricsRegistry()
        let metrics = PipelineMetrics(registry: registry)
        for (sink, encoder) in [(plain, EventEncoder.plain), (cloud, encoder)] {
            let inbox = SinkInbox(
                sinkID: sink.name, capacity: 10, maxBytes: 1 << 20, registry: registry,
                pipelineMetrics: metrics,
                logger: .silent)
            inbox.offer(batch)
            inbox.queue.close()
            try await SinkRunner(
                sink: ConfiguredSink(id: sink.name, connector: sink, filter: EventFilter(), encoder: encoder),
                inbox: inbox, recorder: nil, metrics: metrics, health: HealthState(expectedSubscriptions: []),
                logger: .silent
            ).runOnOwnThread()
        }
        #expect(plain.bodies == [makeEvent(1).body.bytes, update.body.bytes])
        #expect(cloud.bodies.count == 2)
        let second = try #require(
            try JSONSerialization.jsonObject(with: Data(cloud.bodies[1])) as? [String: Any])
        #expect(second["specversion"] as? String == "1.0")
        #expect(second["id"] as? String == "evt_42")
        #expect(second["source"] as? String == "https://cms.example.com/cms")
        #expect(second["type"] as? String == "directus.items.update")
        #expect(second["subject"] as? String == "articles/42")
        #expect(second["time"] as? String == "2026-12-02T10:15:00.123Z")
        #expect(second["datacontenttype"] as? String == "application/json")
        #expect((second["data"] as? [String: Any])?["n"] as? Int == 42)
        // `data` is the event object byte for byte.
        #expect(cloud.bodies[1].suffix(update.body.count + 1).elementsEqual(update.body.bytes + [UInt8(ascii: "}")]))
    }

    @Test func contentTypes() {
        #expect(EventEncoder.plain.contentType == "application/json")
        #expect(EventEncoder(format: .cloudevents, source: "x").contentType == "application/cloudevents+json")
    }

    @Test func theSinkTestEventFollowsTheFormat() throws {
        let encoder = EventEncoder(format: .cloudevents, source: "http://h")
        let test = SinkTestEvent(collection: "articles", encoder: encoder)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(test.body)) as? [String: Any])
        #expect(object["type"] as? String == "directus.bridge.test")
        #expect(object["id"] as? String == test.id)
        #expect((object["data"] as? [String: Any])?["id"] as? String == test.id)
        #expect(SinkTestEvent(collection: "articles").body.starts(with: Array(#"{"id":"#.utf8)))
    }
}
