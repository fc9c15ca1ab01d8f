import BridgeTestSupport
import Foundation
import Testing

/// The bridge's dead-connection rule follows the interval Directus really pings at (docs/directus-protocol.md
/// §14.4), whatever the bridge's or the server's configuration says.
@Suite(.serialized) struct HeartbeatRuleTests {
    /// A live bridge that pings every 30 s itself: alone it would wait a minute before giving a silent server up.
    static func config(url: String) -> String {
        """
        directus:
          url: \(url)
          auth:
            token: admin-static-token
          heartbeat: 30s
          connect_timeout: 60s
          request_timeout: 60s
          reconnect:
            initial_delay: 100ms
            max_delay: 1s
        subscriptions:
          - collection: articles
        delivery:
          mode: live
          state_dir: ./state
        sinks:
          - type: ndjson
            path: "-"
        log:
          level: debug
        shutdown_timeout: 5s
        """
    }

    static func givenUp(_ bridge: BridgeProcess) -> Int {
        bridge.stderr.components(separatedBy: "no traffic for twice the heartbeat").count - 1
    }

    @Test func aServerThatPingsMoreOftenIsGivenUpAfterTwiceItsInterval() throws {
        let emulator = try Emulator(arguments: ["--heartbeat-period", "1"])
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(config: Self.config(url: emulator.url))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        #expect(bridge.stderr.contains("dead_after=2s"), "\(bridge.stderr)")

        try emulator.control("settings", ["silent": true])
        let silentSince = Date()
        #expect(bridge.waitUntil(timeout: 30) { Self.givenUp($0) >= 1 }, "\(bridge.stderr)")
        // Twice the server's 1 s from the last traffic, plus a margin stretched by the patience factor — capped
        // below the minute the bridge's own 30 s heartbeat would take, which the test tells apart.
        #expect(Date().timeIntervalSince(silentSince) < 2 + min(TestEnvironment.patient(4), 50))
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    @Test func aPeriodNodeIgnoresIsTakenForTheMillisecondItBecomes() throws {
        // 3 000 000 s is beyond Node's timer limit: Directus pings every millisecond (and closes whoever does not
        // answer within one), while /server/info still says 3000000.
        let emulator = try Emulator(arguments: ["--heartbeat-period", "3000000"])
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(config: Self.config(url: emulator.url))
        #expect(bridge.waitForLog("outside what Node's timers take", timeout: 15), "\(bridge.stderr)")
        #expect(bridge.stderr.contains("server.heartbeat=1ms") && bridge.stderr.contains("dead_after=2s"))
        #expect(bridge.waitForLog("connecting"))

        try emulator.control("settings", ["silent": true])
        let silentSince = Date()
        #expect(bridge.waitUntil(timeout: 30) { Self.givenUp($0) >= 1 }, "\(bridge.stderr)")
        #expect(
            Date().timeIntervalSince(silentSince) < 2 + min(TestEnvironment.patient(4), 50),
            "not the configured 3000000 s, nor our 30 s (given up after a minute)")
        #expect(bridge.isRunning)
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }
}
