public import BridgeConfig
public import BridgeJSON
public import BridgeEvents
internal import BridgeDirectus
internal import BridgeActivity
internal import BridgeSinks

/// Judges `GET /server/info` against the bridge's configuration (directus-protocol.md §8.6): the version, whether
/// WebSockets are on at the configured path, whether the server's socket auth mode works with ours, and how the
/// server's heartbeat relates to the bridge's. Pure, so every combination is unit-tested.
public enum ServerInfoAssessment {
    /// The `version`, `websocket` and `heartbeat` lines for the answer's `data` object. `asUser` says whether the
    /// request carried a user's token: Directus shows the version and the `websocket` block only to users.
    public static func assess(_ data: JSONValue, asUser: Bool, config: DirectusConfig) -> [CheckResult] {
        var results = [version(data["version"]?.stringValue, asUser: asUser)]
        guard let websocket = data["websocket"], !websocket.isNull else {
            if asUser {
                results.append(
                    .warning(
                        "websocket",
                        "Directus does not report its WebSocket settings (older than 10.x?)",
                        remedy: "make sure WEBSOCKETS_ENABLED=true; `run` will tell when it connects"
                    )
                )
            } else {
                results.append(
                    .warning(
                        "websocket",
                        "not reported to unauthenticated clients, so it cannot be checked",
                        remedy: "make sure WEBSOCKETS_ENABLED=true and WEBSOCKETS_REST_AUTH=public on the server"
                    )
                )
            }
            return results
        }
        if websocket.boolValue == false {
            results.append(
                .fail(
                    "websocket",
                    "WebSockets are disabled on the server (/server/info says websocket: false)",
                    remedy: "set WEBSOCKETS_ENABLED=true in Directus's environment and restart it"
                )
            )
            return results
        }
        results.append(restSocket(websocket["rest"], config: config))
        if let heartbeat = websocket["heartbeat"] { results.append(self.heartbeat(heartbeat, config: config)) }
        return results
    }

    /// The `version` line: Directus shows its version only to users.
    package static func version(_ version: String?, asUser: Bool) -> CheckResult {
        if let version { return .ok("version", "Directus \(version)") }
        return asUser
            ? .warning("version", "Directus did not report its version", remedy: "none needed unless `run` fails")
            : .ok("version", "not reported to unauthenticated clients")
    }

    /// The `websocket` line for the `rest` block: enabled, at the configured path, with a compatible auth mode.
    package static func restSocket(_ rest: JSONValue?, config: DirectusConfig) -> CheckResult {
        guard let rest, rest.boolValue != false else {
            return .fail(
                "websocket",
                "the realtime (REST) socket is disabled on the server",
                remedy: "set WEBSOCKETS_REST_ENABLED=true in Directus's environment and restart it"
            )
        }
        let path = rest["path"]?.stringValue ?? DirectusConfig.defaultWebsocketPath
        let serverMode = rest["authentication"]?.stringValue ?? "handshake"
        if path != config.websocketPath {
            return .fail(
                "websocket",
                "the server's realtime socket is at \(path), the bridge would connect to "
                    + config.websocketPath,
                remedy: "set directus.websocket_path: \(path)"
            )
        }
        let ours = config.auth.mode.rawValue
        let enabled = "WebSockets enabled at \(path), authentication \(serverMode) (bridge: \(ours))"
        if let problem = authProblem(server: serverMode, bridge: config.auth.mode) {
            return .fail("websocket", enabled + "; " + problem.detail, remedy: problem.remedy)
        }
        return .ok("websocket", enabled)
    }

    /// Why the bridge's socket auth mode cannot work with the server's (`WEBSOCKETS_REST_AUTH`), if it cannot
    /// (directus-protocol.md §2.1): a token in the URL works everywhere, an `auth` message works unless the server
    /// insists on strict, and no authentication works only on a public server.
    package static func authProblem(server: String, bridge: AuthMode) -> (detail: String, remedy: String)? {
        switch (server, bridge) {
        case (_, .strict), ("public", _), ("handshake", .handshake):
            return nil
        case ("strict", .handshake):
            return (
                "the server wants the token in the URL and refuses the upgrade otherwise",
                "set directus.auth.mode: strict"
            )
        case (_, .public):
            return (
                "the server requires authentication and the bridge sends none",
                "configure directus.auth (token or email/password) with mode: \(server == "strict" ? "strict" : "handshake")"
            )
        default:
            return (
                "unknown server authentication mode \"\(server)\"",
                "set directus.auth.mode to the server's WEBSOCKETS_REST_AUTH"
            )
        }
    }

    /// `25s`, `2.5s`, `500ms`.
    package static func text(_ duration: Duration) -> String {
        StatsReporter.formatSeconds(
            Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        )
    }

    /// The `heartbeat` line: off fails, a period Node's timers ignore fails (the server then pings every
    /// millisecond, §14.4); any other period is fine whichever side pings more often. The bridge answers every
    /// server ping at once, its own pings are answered, and it declares the socket dead after twice the shorter of
    /// the two periods — so a server that pings less often (Directus's default 30s against the bridge's 25s) costs
    /// nothing and is no warning.
    package static func heartbeat(_ heartbeat: JSONValue, config: DirectusConfig) -> CheckResult {
        let ours = text(config.heartbeat)
        let server = ServerHeartbeat(info: ["websocket": ["heartbeat": heartbeat]])
        let deadAfter = text(server.deadAfter(bridgeHeartbeat: config.heartbeat))
        guard case .every(let interval, let seconds) = server else {
            return .fail(
                "heartbeat",
                "the server's heartbeat is off, so it never answers the bridge's pings and an idle socket is "
                    + "reconnected every \(deadAfter)",
                remedy: "set WEBSOCKETS_HEARTBEAT_ENABLED=true on the server"
            )
        }
        if server.ignoredByNode {
            return .fail(
                "heartbeat",
                "WEBSOCKETS_HEARTBEAT_PERIOD \(seconds) is outside what Node's timers take (1 ms to 2147483.647 s): "
                    + "Directus pings every millisecond and closes any socket that has not answered within one",
                remedy: "set WEBSOCKETS_HEARTBEAT_PERIOD to 2147483 or less on the server (default 30)"
            )
        }
        return .ok(
            "heartbeat",
            "Directus pings every \(text(interval)); the bridge pings every \(ours) and reconnects after \(deadAfter) "
                + "of silence"
        )
    }
}
