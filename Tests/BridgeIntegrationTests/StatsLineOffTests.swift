import BridgeTestSupport
import Foundation
import Testing

/// `log.stats_interval: 0s` is documented as "off" (bridge.yaml, docs/configuration.md). `run` exited 1 right after
/// connecting instead ("stopped because a part of the bridge failed … stats: stopped on its own"): the stats reporter
/// returned at once when off, and the service group takes a service that ends by itself for a failure.
@Suite struct StatsLineOffTests {
    @Test func aBridgeWithTheStatsLineOffDeliversAndStopsWithExit0() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(
            config: """
                directus:
                  url: \(emulator.url)
                  auth:
                    token: admin-static-token
                subscriptions:
                  - collection: articles
                delivery:
                  mode: activity
                  poll_interval: 300ms
                  state_dir: ./state
                sinks:
                  - type: ndjson
                    path: "-"
                log:
                  stats_interval: 0s
                shutdown_timeout: 5s
                """
        )
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        let key = try emulator.create("articles", ["title": "with the stats line off", "status": "published"])
        #expect(bridge.events(beforeSentinel: key) != nil, "\(bridge.stderr)")
        #expect(bridge.isRunning, "\(bridge.stderr)")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr)")
        #expect(!bridge.stderr.contains("stopped on its own"))
    }
}
