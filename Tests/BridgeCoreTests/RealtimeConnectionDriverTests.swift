import BridgeJSON
import BridgeSystem
import BridgeTestSupport
import BridgeWebSocket
import Foundation
import Testing

@testable import BridgeActivity
@testable import BridgeCore
@testable import BridgeDirectus
@testable import BridgeEvents
@testable import BridgeSinks

/// `RealtimeConnectionDriver` on one real connection to the emulator: frames become event lines or reader wake-ups,
/// a renewed token is sent in band, and each way a connection ends is reported as such.
@Suite(.serialized) struct RealtimeConnectionDriverTests {
    /// A driver running on a blocking-pool thread; `value` waits for how its connection ended.
    struct Running: Sendable {
        let rig: RealtimeRig

        var value: RealtimeConnectionDriver.End {
            get async throws {
                var end: RealtimeConnectionDriver.End?
                _ = await pollUntil(timeout: .seconds(60)) {
                    end = rig.end.withLock { $0 }
                    return end != nil
                }
                return try #require(end, "the driver did not end: \(rig.diagnosis())")
            }
        }
    }

    /// Connects to the rig's emulator and runs a driver for `routes` until it ends, both on one blocking-pool
    /// thread, as the socket reader runs in production: Directus fails a handshake whose `auth` does not come
    /// within its auth timeout, and hops through a starved cooperative pool (the whole unit run on two cores) once
    /// took longer than that between the upgrade and the driver's first frame.
    private func start(_ rig: RealtimeRig, routes: [SubscriptionRoute], tokenBox: TokenBox) throws -> Running {
        let url = try WebSocketURL(rig.socketURL)
        BlockingExecutor.shared.submit {
            let end: RealtimeConnectionDriver.End
            do {
                let connection = try WebSocketConnection.connectBlocking(
                    to: url,
                    options: WebSocketOptions(),
                    logger: .silent
                )
                end = RealtimeConnectionDriver(
                    connection: connection,
                    routes: routes,
                    authMode: .handshake,
                    heartbeat: .seconds(30),
                    sinks: rig.sinks,
                    tokenBox: tokenBox,
                    stop: rig.stop,
                    trigger: rig.trigger,
                    health: rig.health,
                    metrics: rig.metrics,
                    logger: .silent
                ).run()
            } catch {
                end = .failed("connect: \(error)")
            }
            rig.end.withLock { $0 = end }
        }
        return Running(rig: rig)
    }

    private func staticToken() -> TokenBox {
        let box = TokenBox()
        box.publish("admin-static-token")
        return box
    }

    @Test func liveRoutesGiveEventLinesAndTriggerRoutesWakeTheReader() async throws {
        let rig = try await RealtimeRig(subscriptions: ["articles", "tags"])
        let routes = [
            RealtimeRig.route("articles", handling: .emit),
            RealtimeRig.route("tags", handling: .trigger, primaryKey: "slug"),
        ]
        let driver = try start(rig, routes: routes, tokenBox: staticToken())
        #expect(await pollUntil { rig.health.snapshot.connected }, "\(rig.diagnosis())")
        #expect(rig.health.snapshot.liveSubscriptions == ["articles", "tags"])

        let key = try rig.emulator.create("articles", ["title": "from the socket"])
        let event = try #require(await rig.nextEvent(of: "articles"))
        #expect(event.id.hasPrefix("evt_") && event.event == .create && event.key == key && event.origin == .live)
        #expect(event.seq == nil && event.subscription == "articles")
        let line = try JSONValue.parse(event.body.bytes)
        #expect(line["data"]?["title"] == "from the socket")

        // A trigger route's events wake the reader instead of giving lines; every update names its keys.
        try rig.emulator.create("tags", ["slug": "fresh", "label": "new"])
        try rig.emulator.rest("PATCH", "/items/articles/\(key)", ["title": "changed"])
        #expect(await pollUntil { rig.trigger.calls.withLock { $0.changes.contains("tags") } })
        #expect(
            await pollUntil {
                rig.trigger.calls.withLock {
                    $0.updates.contains { $0.collection == "articles" && $0.keys == [key] && $0.delivered }
                }
            }
        )
        #expect(await rig.nextEvent(of: "articles")?.event == .update)
        #expect(rig.trigger.calls.withLock { $0.reconnects } == 1, "established once: one reconnect notice")

        rig.stop.trigger()
        #expect(try await driver.value == .shutdown)
        #expect(!rig.health.snapshot.connected && rig.health.snapshot.liveSubscriptions.isEmpty)
        #expect(await pollUntil { rig.stat("clients_current") == 0 })
    }

    @Test func theEventsOfOneFrameShareOneBufferOfExactlyTheirLines() async throws {
        let rig = try await RealtimeRig(subscriptions: ["articles"])
        let driver = try start(rig, routes: [RealtimeRig.route("articles", handling: .emit)], tokenBox: staticToken())
        #expect(await pollUntil { rig.health.snapshot.liveSubscriptions == ["articles"] }, "\(rig.diagnosis())")
        var keys: [String] = []
        for title in ["one", "two", "three"] {
            keys.append(try rig.emulator.create("articles", ["title": title]))
            #expect(await rig.nextEvent(of: "articles")?.key == keys.last)
        }
        // An update of several keys is one frame (§5.3), its items one read's events.
        try rig.emulator.rest("PATCH", "/items/articles", ["keys": keys, "data": ["status": "published"]])
        var batch: EventBatch?
        _ = await pollUntil(timeout: .seconds(30)) {
            batch = rig.inbox.queue.take(timeout: .zero)
            return batch != nil
        }
        let events = try #require(batch?.events)
        #expect(events.map(\.key) == keys && events.allSatisfy { $0.event == .update })
        #expect(events.map { (try? JSONValue.parse($0.body.bytes))?["data"]?["title"] } == ["one", "two", "three"])
        let lines = try #require(events.withUnsafeBufferPointer { EventBody.withLines(of: $0) { Array($0) } })
        #expect(lines == events.flatMap { $0.body.bytes + [0x0A] })
        #expect(events[0].body.buffer.count == lines.count, "the buffer holds the read's lines and nothing more")
        rig.stop.trigger()
        #expect(try await driver.value == .shutdown)
    }

    /// Each item's key, read from the member the decoder noted or looked up, is the lookup's: escaped and numeric
    /// keys as the contract writes them, items without a key or with a key of the wrong kind skipped — and, lost for
    /// every sink, counted as dropped (`directus_bridge_sink_dropped_total`, `…events_dropped_total{reason=
    /// "no_primary_key"}`; before: a warning alone, nothing counted); an update's keys reach the activity trigger the
    /// same way.
    @Test func everyItemsKeyIsReadAsTheLookupReadsIt() async throws {
        let rig = try await RealtimeRig(subscriptions: ["articles"])
        let driver = try start(rig, routes: [RealtimeRig.route("articles", handling: .emit)], tokenBox: staticToken())
        #expect(await pollUntil { rig.health.snapshot.liveSubscriptions == ["articles"] }, "\(rig.diagnosis())")
        let items = [
            #"{"id":"a\"b\\c\u00e9","t":1}"#, #"{"x":{"id":9},"id":-7}"#, #"{"id":1.5}"#, #"{"title":"no key"}"#,
            #"{"id":12345678901234567890123,"y":[]}"#, #"{"\u0069d":5}"#, #"{ "id" : "plain" }"#, #"{"id":null}"#,
        ]
        let frames = [
            #"{"type":"subscription","event":"create","uid":"articles","data":[\#(items.joined(separator: ","))]}"#,
            #"{"type":"subscription","event":"create","data":{"id":"x\u00e9","n":2},"uid":"articles"}"#,
            #"{"type":"subscription","event":"update","uid":"articles","data":[{"id":"u\"1"},{"k":1,"id":2}]}"#,
        ]
        for frame in frames { try rig.emulator.control("send", ["kind": "text", "text": frame]) }
        var events: [EncodedEvent] = []
        _ = await pollUntil(timeout: .seconds(30)) {
            while let batch = rig.inbox.queue.take(timeout: .zero) { events += batch.events }
            return events.count >= 8
        }
        #expect(
            events.map(\.key) == [
                "a\"b\\c\u{E9}", "-7", "12345678901234567890123", "5", "plain", "x\u{E9}", "u\"1", "2",
            ]
        )
        let lines = events.map { try? JSONValue.parse($0.body.bytes) }
        #expect(lines.map { $0?["key"]?.stringValue } == events.map(\.key))
        let data =
            [items[0], items[1], items[4], items[5], items[6], #"{"id":"x\u00e9","n":2}"#, #"{"id":"u\"1"}"#]
            + [#"{"k":1,"id":2}"#]
        #expect(lines.map { $0?["data"] } == data.map { try? JSONValue.parse($0) })
        #expect(rig.trigger.calls.withLock { $0.updates.last?.keys } == ["u\"1", "2"])
        #expect(rig.inbox.metrics.droppedTotal == 3, "1.5, no key, null")
        #expect(
            rig.registry.render().contains(#"directus_bridge_events_dropped_total{reason="no_primary_key"} 3"#),
            "\(rig.registry.render())")
        rig.stop.trigger()
        #expect(try await driver.value == .shutdown)
    }

    @Test func aRenewedTokenIsSentInBandOnTheSameConnection() async throws {
        let rig = try await RealtimeRig(subscriptions: ["articles"])
        let tokenBox = staticToken()
        let driver = try start(rig, routes: [RealtimeRig.route("articles", handling: .emit)], tokenBox: tokenBox)
        #expect(await pollUntil { rig.health.snapshot.connected })
        let authOKBefore = rig.stat("auth_ok")
        let minted = try rig.emulator.control("token", ["email": "admin@example.com", "ttl_ms": 600_000])
        let token = try #require((minted as? [String: Any])?["access_token"] as? String)
        tokenBox.publish(token)
        #expect(await pollUntil { rig.stat("auth_ok") > authOKBefore })
        #expect(rig.stat("connections_total") == 1, "re-authenticated in band, not by reconnecting")
        try rig.emulator.create("articles", ["title": "after the renewal"])
        #expect(await rig.nextEvent(of: "articles") != nil)
        rig.stop.trigger()
        #expect(try await driver.value == .shutdown)
    }

    @Test func aDroppedConnectionEndsAsClosedWith1006() async throws {
        let rig = try await RealtimeRig(subscriptions: ["articles"])
        let routes = [RealtimeRig.route("articles", handling: .emit)]
        let driver = try start(rig, routes: routes, tokenBox: staticToken())
        #expect(await pollUntil { rig.health.snapshot.connected })
        try rig.emulator.control("drop", ["reset": true])
        let end = try await driver.value
        guard case .closed(let code, _) = end else {
            Issue.record("ended \(end)")
            return
        }
        #expect(code == 1006)
        #expect(!rig.health.snapshot.connected)
    }

    /// Text reaches the driver before the connection checks its UTF-8 (the decoder's strict JSON does): a frame
    /// the decoder refuses still ends the connection with 1007 when it is not UTF-8, wherever the bad bytes lie,
    /// while one that is UTF-8 but no Directus message is skipped as before.
    @Test(arguments: [
        Array(#"{"type":"ping","x":""#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8),  // refused at the bad bytes
        Array("not json, ".utf8) + [0xC0, 0xAF],  // refused at its first byte, before the bad ones
    ])
    func aTextFrameThatIsNotUTF8EndsTheConnectionWith1007(payload: [UInt8]) async throws {
        let rig = try await RealtimeRig(subscriptions: ["articles"])
        let driver = try start(rig, routes: [RealtimeRig.route("articles", handling: .emit)], tokenBox: staticToken())
        #expect(await pollUntil { rig.health.snapshot.liveSubscriptions == ["articles"] }, "\(rig.diagnosis())")
        try rig.emulator.control("send", ["kind": "text", "text": "not json, but UTF-8: \u{E9}"])
        try rig.emulator.create("articles", ["title": "after the unreadable frame"])
        #expect(await rig.nextEvent(of: "articles") != nil, "a UTF-8 frame that is no message is skipped")
        let frame = [0x81, UInt8(payload.count)] + payload  // one unmasked text frame, shorter than 126 bytes
        try rig.emulator.control("send", ["kind": "raw", "data_base64": Data(frame).base64EncodedString()])
        let end = try await driver.value
        guard case .failed(let description) = end else {
            Issue.record("ended \(end)")
            return
        }
        #expect(description.contains("close code 1007"), "\(description)")
    }

    @Test func aRefusedSocketAuthenticationEndsTheConnection() async throws {
        let rig = try await RealtimeRig(subscriptions: ["articles"])
        let tokenBox = TokenBox()
        tokenBox.publish("no-such-token")
        let driver = try start(rig, routes: [RealtimeRig.route("articles", handling: .emit)], tokenBox: tokenBox)
        let end = try await driver.value
        guard case .authenticationFailed(let message) = end else {
            Issue.record("ended \(end)")
            return
        }
        #expect(message.hasPrefix("AUTH_FAILED"), "\(message)")
        #expect(!rig.health.snapshot.connected)
    }
}
