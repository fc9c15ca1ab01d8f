import BridgeConfig
import BridgeJSON
import Testing

@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks

func directusConfig(mode: AuthMode = .handshake, heartbeat: Duration = .seconds(25), path: String = "/websocket")
    -> DirectusConfig
{
    DirectusConfig(
        url: HTTPURL("http://127.0.0.1:8055")!,
        websocketPath: path,
        auth: AuthConfig(credentials: .token("t0ken-for-tests"), mode: mode),
        heartbeat: heartbeat
    )
}

/// `data` of a /server/info answer like Directus 11 gives a user.
func serverInfo(
    websocket: String =
        #"{"rest":{"authentication":"handshake","path":"/websocket"},"graphql":false,"heartbeat":30,"logs":false}"#
)
    throws -> JSONValue
{
    try JSONValue.parse(#"{"project":{"project_name":"x"},"version":"11.14.1","websocket":\#(websocket)}"#)
}

@Suite struct ServerInfoAssessmentTests {
    func results(_ info: JSONValue, asUser: Bool = true, config: DirectusConfig = directusConfig()) -> [String:
        CheckResult]
    {
        Dictionary(ServerInfoAssessment.assess(info, asUser: asUser, config: config).map { ($0.check, $0) }) { a, _ in a
        }
    }

    @Test func matchingServerIsOk() throws {
        let all = results(try serverInfo(), config: directusConfig(heartbeat: .seconds(30)))
        #expect(all["version"] == .ok("version", "Directus 11.14.1"))
        #expect(all["websocket"]?.status == .ok)
        #expect(
            all["websocket"]?.detail == "WebSockets enabled at /websocket, authentication handshake (bridge: handshake)"
        )
        #expect(all["heartbeat"]?.status == .ok)
        #expect(all["heartbeat"]?.detail.contains("reconnects after 1m of silence") == true)
    }

    /// The server's heartbeat is any JSON number: huge, infinite (`1e400`) or negative ones must not trap.
    @Test(arguments: ["1e400", "-1e400", "1e300", "9223372036854775807", "-9223372036854775808", "-5", "0.0001"])
    func anyHeartbeatNumberIsJudgedWithoutTrapping(heartbeat: String) throws {
        let websocket = #"{"rest":{"authentication":"handshake","path":"/websocket"},"heartbeat":\#(heartbeat)}"#
        let info = try serverInfo(websocket: websocket)
        let all = results(info, config: directusConfig(heartbeat: .seconds(30)))
        #expect(all["heartbeat"] != nil)
    }

    @Test func disabledWebSocketsFail() throws {
        let all = results(try serverInfo(websocket: "false"))
        #expect(all["websocket"]?.status == .fail)
        #expect(all["websocket"]?.remedy?.contains("WEBSOCKETS_ENABLED=true") == true)
        #expect(all["heartbeat"] == nil)
    }

    @Test func disabledRESTSocketFails() throws {
        let all = results(
            try serverInfo(
                websocket: #"{"rest":false,"graphql":{"authentication":"handshake","path":"/graphql"},"heartbeat":30}"#
            )
        )
        #expect(all["websocket"]?.status == .fail)
        #expect(all["websocket"]?.remedy?.contains("WEBSOCKETS_REST_ENABLED=true") == true)
    }

    @Test func otherPathFailsWithTheSetting() throws {
        let all = results(
            try serverInfo(websocket: #"{"rest":{"authentication":"handshake","path":"/ws"},"heartbeat":30}"#)
        )
        #expect(all["websocket"]?.status == .fail)
        #expect(all["websocket"]?.remedy == "set directus.websocket_path: /ws")
    }

    @Test(arguments: [
        ("handshake", AuthMode.handshake, true), ("handshake", .strict, true), ("handshake", .public, false),
        ("strict", .handshake, false), ("strict", .strict, true), ("strict", .public, false),
        ("public", .handshake, true), ("public", .strict, true), ("public", .public, true),
        ("weird", .handshake, false),
    ])
    func authModeCompatibility(server: String, bridge: AuthMode, works: Bool) {
        #expect((ServerInfoAssessment.authProblem(server: server, bridge: bridge) == nil) == works)
    }

    @Test func strictServerTellsWhichModeToSet() throws {
        let info = try serverInfo(
            websocket: #"{"rest":{"authentication":"strict","path":"/websocket"},"heartbeat":30}"#
        )
        let websocket = results(info)["websocket"]
        #expect(websocket?.status == .fail)
        #expect(websocket?.remedy == "set directus.auth.mode: strict")
    }

    @Test func heartbeatOffFailsAndAnyPeriodNodeRunsIsOk() throws {
        let off = results(
            try serverInfo(websocket: #"{"rest":{"authentication":"handshake","path":"/websocket"},"heartbeat":false}"#)
        )
        #expect(off["heartbeat"]?.status == .fail)
        #expect(off["heartbeat"]?.remedy?.contains("WEBSOCKETS_HEARTBEAT_ENABLED=true") == true)

        // Both sides on their defaults (Directus 30s, the bridge 25s): nothing to warn about.
        let defaults = results(try serverInfo(), config: directusConfig(heartbeat: DirectusConfig.defaultHeartbeat))
        #expect(defaults["heartbeat"]?.status == .ok)
        #expect(
            defaults["heartbeat"]?.detail
                == "Directus pings every 30s; the bridge pings every 25s and reconnects after 50s of silence")

        let shorter = results(
            try serverInfo(websocket: #"{"rest":{"authentication":"handshake","path":"/websocket"},"heartbeat":0.5}"#)
        )
        #expect(shorter["heartbeat"]?.status == .ok)
        #expect(shorter["heartbeat"]?.detail.hasPrefix("Directus pings every 500ms") == true)
    }

    @Test func aPeriodNodeIgnoresFailsAndCannotTrap() throws {
        // docs/directus-protocol.md §14.4: beyond 2147483.647 s (or zero, or negative) Node runs the heartbeat every
        // millisecond. 1e300 seconds once trapped converting milliseconds to an integer.
        for period in ["3000000", "1e300", "0", "-5"] {
            let info = try serverInfo(
                websocket: #"{"rest":{"authentication":"handshake","path":"/websocket"},"heartbeat":\#(period)}"#)
            let line = results(info)["heartbeat"]
            #expect(line?.status == .fail, "\(period)")
            #expect(line?.detail.contains("pings every millisecond") == true, "\(period)")
            #expect(line?.remedy?.contains("2147483 or less") == true, "\(period)")
        }
    }

    @Test func unreportedSettingsAreWarningsNotFailures() throws {
        let info = try JSONValue.parse(#"{"project":{"project_name":"x"}}"#)
        let anonymous = results(info, asUser: false, config: directusConfig(mode: .public))
        #expect(anonymous["version"]?.status == .ok)
        #expect(anonymous["websocket"]?.status == .warning)
        let user = results(info, asUser: true)
        #expect(user["version"]?.status == .warning)
        #expect(user["websocket"]?.status == .warning)
    }
}

@Suite struct CheckResultTests {
    @Test func linesFollowTheContract() {
        #expect(CheckResult.ok("server", "answers").line == "ok   server: answers")
        #expect(
            CheckResult.fail("credentials", "rejected", remedy: "check the password").line
                == "FAIL credentials: rejected — check the password"
        )
        #expect(
            CheckResult.warning("activity log", "not readable", remedy: "grant it").line
                == "ok   activity log: warning: not readable — grant it"
        )
        #expect(CheckResult.warning("x", "y", remedy: "z").passed)
        #expect(!CheckResult.fail("x", "y", remedy: "z").passed)
    }

    @Test func fieldsParameterFollowsTheSubscriptionQuery() {
        #expect(BridgeCheck.fieldsParameter(nil) == "*")
        #expect(
            BridgeCheck.fieldsParameter(.object([("fields", .array([.string("id"), .string("title")]))])) == "id,title"
        )
        #expect(BridgeCheck.fieldsParameter(.object([("fields", .string("id,author.name"))])) == "id,author.name")
        #expect(BridgeCheck.fieldsParameter(.object([("filter", .object([]))])) == "*")
    }
}
