public import BridgeJSON
public import BridgeSystem
internal import BridgeEvents

/// Directus's heartbeat as the server really runs it (directus-protocol.md §14.4), from `/server/info`.
///
/// Directus hands `WEBSOCKETS_HEARTBEAT_PERIOD` × 1000 to Node's `setInterval` and `setTimeout` unchecked. Node's
/// timers take 1 … 2³¹−1 ms; any other value (above 2 147 483.647 s, zero, negative, not a number) becomes 1 ms,
/// with nothing but a `TimeoutOverflowWarning` in the server's log. `/server/info` still reports the configured
/// value, so the bridge works the interval out itself.
public enum ServerHeartbeat: Sendable, Equatable {
    /// `heartbeat: false`: the server neither pings nor answers pings.
    case off
    /// The server pings every `interval` and closes a client silent for one interval after a ping;
    /// `configuredSeconds` is what `/server/info` says.
    case every(interval: Duration, configuredSeconds: Double)
    /// Not reported (an anonymous caller, an old server, `/server/info` unreadable).
    case unknown

    /// Node's largest timer delay (`TIMEOUT_MAX`, 2³¹−1 ms).
    public static let nodeTimerLimitMilliseconds = 2_147_483_647.0

    /// The bridge never declares a connection dead after less silence than this: shorter would take a scheduling
    /// delay on a busy machine for a dead peer.
    public static let shortestDeadline: Duration = .seconds(2)

    /// The heartbeat of a `/server/info` answer's `data` object.
    public init(info data: JSONValue?) {
        guard let websocket = data?["websocket"], case .object = websocket, let value = websocket["heartbeat"] else {
            self = .unknown
            return
        }
        if value.boolValue == false {
            self = .off
        } else if let seconds = value.doubleValue {
            self = .every(interval: Self.interval(configuredSeconds: seconds), configuredSeconds: seconds)
        } else {
            self = .unknown
        }
    }

    /// The interval Node's timers run for a configured period in seconds: the period when it is 1 … 2³¹−1 ms,
    /// else 1 ms.
    public static func interval(configuredSeconds seconds: Double) -> Duration {
        let milliseconds = seconds * 1000
        guard milliseconds >= 1 && milliseconds <= nodeTimerLimitMilliseconds else { return .milliseconds(1) }
        return .nanoseconds(Int64(milliseconds * 1_000_000))
    }

    /// Whether the configured period is one Node's timers ignore (the server then pings every millisecond).
    public var ignoredByNode: Bool {
        guard case .every(_, let seconds) = self else { return false }
        let milliseconds = seconds * 1000
        return !(milliseconds >= 1 && milliseconds <= Self.nodeTimerLimitMilliseconds)
    }

    /// The silence after which the bridge declares its connection dead: twice the shorter of its own ping interval
    /// and the server's (whose pings it answers), never less than `shortestDeadline`. Without a server heartbeat the
    /// bridge's own pings go unanswered (§4): twice its own interval.
    public func deadAfter(bridgeHeartbeat: Duration) -> Duration {
        guard case .every(let interval, _) = self else { return bridgeHeartbeat * 2 }
        return max(Self.shortestDeadline, min(bridgeHeartbeat, interval) * 2)
    }

    /// Logs how the heartbeat runs: a warning when Node ignores the server's configured period.
    public func log(bridgeHeartbeat: Duration, to logger: Logger) {
        let deadAfter = deadAfter(bridgeHeartbeat: bridgeHeartbeat)
        switch self {
        case .every(let interval, let seconds) where ignoredByNode:
            logger.warning(
                "Directus's WEBSOCKETS_HEARTBEAT_PERIOD is outside what Node's timers take (1 ms to 2147483.647 s): "
                    + "Directus pings every millisecond and closes any socket that has not answered within one; "
                    + "set it to 2147483 or less (default 30)",
                metadata: [
                    "server.heartbeat_configured": seconds, "server.heartbeat": interval,
                    "dead_after": deadAfter,
                ])
        case .every(let interval, _):
            logger.info(
                "heartbeat", metadata: [
                    "server.heartbeat": interval, "bridge.heartbeat": bridgeHeartbeat,
                    "dead_after": deadAfter,
                ])
        case .off:
            logger.warning(
                "Directus's heartbeat is off: it answers no pings, so an idle socket is reconnected every "
                    + deadAfter.logText + "; set WEBSOCKETS_HEARTBEAT_ENABLED=true")
        case .unknown:
            logger.debug("Directus does not report its heartbeat", metadata: ["dead_after": deadAfter])
        }
    }
}
