import BridgeJSON
import Testing

@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks

/// The interval Directus really pings at (directus-protocol.md §14.4) and the bridge's dead-connection rule.
@Suite struct ServerHeartbeatTests {
    func heartbeat(_ value: JSONValue) -> ServerHeartbeat {
        ServerHeartbeat(info: ["websocket": ["heartbeat": value]])
    }

    @Test func nodeTimersTakeOneMillisecondUpToTwoToTheThirtyOneMinusOne() {
        #expect(ServerHeartbeat.interval(configuredSeconds: 30) == .seconds(30))
        #expect(ServerHeartbeat.interval(configuredSeconds: 0.5) == .milliseconds(500))
        #expect(ServerHeartbeat.interval(configuredSeconds: 0.001) == .milliseconds(1))
        #expect(ServerHeartbeat.interval(configuredSeconds: 2_147_483.647) == .milliseconds(2_147_483_647))
        // Beyond Node's limit, zero, negative, absurd: Node runs the timer every millisecond.
        for ignored in [2_147_483.648, 3_000_000, 1e300, 0, 0.0005, -5] {
            #expect(ServerHeartbeat.interval(configuredSeconds: ignored) == .milliseconds(1), "\(ignored)")
            #expect(heartbeat(JSONValue(ignored)).ignoredByNode, "\(ignored)")
        }
        #expect(!heartbeat(30).ignoredByNode)
    }

    @Test func whatServerInfoSays() {
        #expect(heartbeat(30) == .every(interval: .seconds(30), configuredSeconds: 30))
        #expect(heartbeat(false) == .off)
        #expect(heartbeat("30") == .unknown)
        #expect(ServerHeartbeat(info: ["websocket": false]) == .unknown)
        #expect(ServerHeartbeat(info: nil) == .unknown)
        let huge = try? JSONValue.parse("1e400")
        #expect(heartbeat(huge ?? .null).ignoredByNode, "a number beyond Double is beyond Node's limit too")
    }

    @Test func deadAfterFollowsTheIntervalTheServerReallyUses() {
        // The server pings more often than the bridge: its pings are traffic, twice its interval suffices.
        #expect(heartbeat(5).deadAfter(bridgeHeartbeat: .seconds(30)) == .seconds(10))
        // The bridge pings more often: its own pongs are the traffic.
        #expect(heartbeat(30).deadAfter(bridgeHeartbeat: .seconds(25)) == .seconds(50))
        // A configured period Node ignores: the server pings every millisecond, whatever /server/info says; the
        // rule follows that, bounded below so that a scheduling delay is not taken for a dead peer.
        #expect(heartbeat(3_000_000).deadAfter(bridgeHeartbeat: .seconds(30)) == ServerHeartbeat.shortestDeadline)
        // No server heartbeat, or none reported: the bridge's own rule.
        #expect(ServerHeartbeat.off.deadAfter(bridgeHeartbeat: .seconds(25)) == .seconds(50))
        #expect(ServerHeartbeat.unknown.deadAfter(bridgeHeartbeat: .seconds(25)) == .seconds(50))
    }
}
