import BridgeHTTP
import BridgeSystem
import BridgeTestSupport
import BridgeWebSocket
import Synchronization
import Testing

@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks

/// `RealtimeSupervisor` against the emulator: it reconnects after a lost connection and after refused upgrades,
/// with the reason counted, renews refused credentials before trying again, and returns when stopped.
@Suite(.serialized) struct RealtimeSupervisorTests {
    /// Reconnect reasons as the supervisor reports them (`directus_bridge_reconnects_total{reason}`).
    final class Reasons: Sendable {
        let list = Mutex<[String]>([])
        func contains(_ reason: String) -> Bool { list.withLock { $0.contains(reason) } }
    }

    /// Runs a supervisor for the articles collection with fast reconnect delays until the rig's stop triggers.
    private func start(_ rig: RealtimeRig, token: String, reasons: Reasons) -> Task<Void, Never> {
        let client = DirectusClient(baseURL: rig.emulator.url, transport: HTTPClient(), timeout: .seconds(10))
        let auth = AuthSession(credentials: .staticToken(token), client: client, logger: .silent)
        rig.health.update { $0.authenticated = true }
        let supervisor = RealtimeSupervisor(
            settings: RealtimeSupervisor.Settings(
                url: rig.socketURL, authMode: .handshake, options: WebSocketOptions(), heartbeat: .seconds(30),
                initialDelay: .milliseconds(100), maxDelay: .milliseconds(500), resetAfter: .seconds(60)),
            routes: [RealtimeRig.route("articles", handling: .emit)], auth: auth, sinks: rig.sinks,
            trigger: rig.trigger, health: rig.health, metrics: rig.metrics,
            reconnects: { reason in reasons.list.withLock { $0.append(reason) } }, logger: .silent)
        return Task { [stop = rig.stop] in await supervisor.run(stop: stop) }
    }

    @Test func aLostConnectionIsReconnectedAndEventsFlowAgain() async throws {
        let rig = try await RealtimeRig(subscriptions: ["articles"])
        let reasons = Reasons()
        let supervisor = start(rig, token: "admin-static-token", reasons: reasons)
        #expect(await pollUntil { rig.health.snapshot.connected })
        try rig.emulator.control("drop", ["reset": true])
        #expect(await pollUntil { reasons.contains("closed") })
        #expect(await pollUntil { rig.health.snapshot.connected && rig.stat("connections_total") >= 2 })
        #expect(rig.trigger.calls.withLock { $0.reconnects } >= 2, "each established connection asks for backfill")
        try rig.emulator.create("articles", ["title": "after the reconnect"])
        #expect(await rig.nextEvent(of: "articles")?.event == .create)
        rig.stop.trigger()
        await supervisor.value
        #expect(!rig.health.snapshot.connected)
    }

    @Test func refusedUpgradesAreRetriedUntilOneIsAccepted() async throws {
        let rig = try await RealtimeRig(subscriptions: ["articles"])
        try rig.emulator.control("refuse-upgrades", ["count": 2, "status": 503])
        let reasons = Reasons()
        let supervisor = start(rig, token: "admin-static-token", reasons: reasons)
        #expect(await pollUntil { rig.health.snapshot.connected })
        #expect(reasons.contains("handshake_503"), "\(reasons.list.withLock { $0 })")
        rig.stop.trigger()
        await supervisor.value
    }

    /// Credentials Directus refuses: the socket's refusal leads to a renewal, whose refusal marks the bridge not
    /// authenticated; it keeps trying (no exit) and still stops at once when asked.
    @Test func refusedCredentialsAreReportedAndTriedAgain() async throws {
        let rig = try await RealtimeRig(subscriptions: ["articles"])
        let reasons = Reasons()
        let supervisor = start(rig, token: "no-such-token", reasons: reasons)
        #expect(await pollUntil { reasons.contains("auth_failed") })
        #expect(await pollUntil { !rig.health.snapshot.authenticated })
        #expect(!rig.health.snapshot.connected)
        // Not reconnecting with credentials known to be refused: asking Directus again (GET /users/me) instead.
        let requests = rig.stat("http_requests")
        #expect(await pollUntil { rig.stat("http_requests") >= requests + 2 }, "tried again, every max_delay")
        #expect(rig.stat("connections_total") == 1)
        rig.stop.trigger()
        await supervisor.value
    }
}
