import BridgeTestSupport
import Foundation
import Testing

/// `directus-bridge check` against the emulator: all ok, then each kind of failure with its FAIL line and exit 1.
@Suite(.serialized) struct CheckCommandTests {
    static let webhookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

    /// A config for `check`; `auth` and `subscriptions` are YAML lines, `sinks` more entries of `sinks`; a nil
    /// `heartbeat` leaves the bridge's default.
    func checkConfig(
        url: String,
        auth: String = "    token: admin-static-token",
        subscriptions: String = "  - collection: articles\n    query:\n      fields: [id, title]\n  - collection: tags",
        mode: String = "auto",
        sinks: String = "",
        heartbeat: String? = "30s"
    ) -> String {
        """
        directus:
          url: \(url)
          auth:
        \(auth)
          \(heartbeat.map { "heartbeat: \($0)" } ?? "")
        subscriptions:
        \(subscriptions)
        delivery:
          mode: \(mode)
        sinks:
          - type: ndjson
            path: "-"
        \(sinks)
        """
    }

    /// Runs `check` with `yaml` (and `arguments`), returning the exit code, stdout lines and stderr.
    func runCheck(_ yaml: String, arguments: [String] = []) throws -> (code: Int32?, lines: [String], stderr: String) {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "bridge-check")
        try yaml.write(to: directory.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
        let process = try BridgeProcess(
            arguments: ["check", "--config", "bridge.yaml"] + arguments,
            directory: directory
        )
        let code = process.waitForExit(timeout: 30)
        return (code, process.lines, process.stderr)
    }

    /// Tests/tools/check_webhook_receiver.py, verifying with `webhookSecret`.
    func startReceiver() throws -> PythonServer {
        try PythonServer(script: "check_webhook_receiver.py", arguments: ["--secret", Self.webhookSecret])
    }

    func line(_ lines: [String], _ check: String) -> String? {
        lines.first { $0.hasPrefix("ok   \(check):") || $0.hasPrefix("FAIL \(check):") }
    }

    @Test func everythingOkAgainstTheEmulator() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let receiver = try startReceiver()
        defer { receiver.stop() }
        let sinks = """
              - type: webhook
                url: http://127.0.0.1:\(receiver.port)/hook
                secret: \(Self.webhookSecret)
            """
        let result = try runCheck(checkConfig(url: emulator.url, sinks: sinks))
        #expect(result.code == 0, "stdout: \(result.lines)\nstderr: \(result.stderr)")
        for check in [
            "server", "credentials", "version", "websocket", "heartbeat", "collection articles", "collection tags",
            "activity log", "activity tracking articles", "activity tracking tags",
            "webhook sinks[1] http://127.0.0.1:\(receiver.port)",
        ] {
            let found = line(result.lines, check)
            #expect(found?.hasPrefix("ok   ") == true, "\(check): \(found ?? "missing") in \(result.lines)")
        }
        #expect(line(result.lines, "version")?.contains("11.14.1") == true)
        #expect(line(result.lines, "collection articles")?.contains("fields id,title; primary key id") == true)
        #expect(line(result.lines, "collection tags")?.contains("primary key slug") == true)
        #expect(result.lines.allSatisfy { $0.hasPrefix("ok   ") }, "\(result.lines)")
        #expect(!result.stderr.contains("admin-static-token"))
        let bareKey = String(Self.webhookSecret.dropFirst("whsec_".count))
        #expect(!(result.stderr + result.lines.joined()).contains(bareKey))
    }

    @Test func signedTestEventVerifiesWithTheStandardWebhooksLibrary() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let receiver = try startReceiver()
        defer { receiver.stop() }
        let sinks = """
              - type: webhook
                url: http://127.0.0.1:\(receiver.port)/hook
                secret: \(Self.webhookSecret)
            """
        let result = try runCheck(checkConfig(url: emulator.url, sinks: sinks), arguments: ["--send-test-event"])
        #expect(result.code == 0, "stdout: \(result.lines)\nstderr: \(result.stderr)")
        #expect(
            line(result.lines, "webhook sinks[1] http://127.0.0.1:\(receiver.port)")?.contains(
                "accepted a signed test event"
            ) == true
        )
        let received = try HTTPFetch.get("http://127.0.0.1:\(receiver.port)/received")
        let entries = (try JSONSerialization.jsonObject(with: received.body)) as? [[String: Any]] ?? []
        #expect(entries.count == 1)
        #expect(entries.first?["signature_ok"] as? Bool == true)
        #expect(entries.first?["type"] as? String == "directus.bridge.test")
        #expect((entries.first?["id"] as? String)?.hasPrefix("evt_test_") == true)

        // A receiver with another secret refuses it: FAIL with what to do.
        let wrong = """
              - type: webhook
                url: http://127.0.0.1:\(receiver.port)/hook
                secret: whsec_\(Data("another secret entirely".utf8).base64EncodedString())
            """
        let refused = try runCheck(checkConfig(url: emulator.url, sinks: wrong), arguments: ["--send-test-event"])
        #expect(refused.code == 1)
        let failed = line(refused.lines, "webhook sinks[1] http://127.0.0.1:\(receiver.port)")
        #expect(failed?.hasPrefix("FAIL ") == true)
        #expect(failed?.contains("HTTP 401") == true && failed?.contains("same secret") == true, "\(failed ?? "")")
    }

    @Test func failingOrUnreachableWebhookFails() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let receiver = try startReceiver()
        defer { receiver.stop() }
        let sinks = """
              - type: webhook
                url: http://127.0.0.1:\(receiver.port)/broken?token=query-secret-1234
              - type: webhook
                url: http://127.0.0.1:1/nothing-listens
            """
        let result = try runCheck(checkConfig(url: emulator.url, sinks: sinks))
        #expect(result.code == 1)
        // Named by position (the NDJSON sink of `checkConfig` is sinks[0]) and host:port, never by path or query.
        #expect(line(result.lines, "webhook sinks[1] http://127.0.0.1:\(receiver.port)")?.hasPrefix("FAIL ") == true)
        #expect(line(result.lines, "webhook sinks[2] http://127.0.0.1:1")?.hasPrefix("FAIL ") == true)
        #expect(!result.lines.joined().contains("query-secret-1234"), "\(result.lines)")
    }

    /// A named sink is named by its name on its check line (contract.md, "Sink names": its identity everywhere), an
    /// unnamed one by its position: two sinks on the same host and port are told apart, whatever their type.
    @Test func everySinksCheckLineNamesTheSink() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let receiver = try startReceiver()
        defer { receiver.stop() }
        let sinks = """
              - name: search-index
                type: webhook
                url: http://127.0.0.1:\(receiver.port)/no-such-path
              - name: cache-a
                type: redis
                url: redis://127.0.0.1:1/0
                stream: "a.{collection}"
              - name: cache-b
                type: redis
                url: redis://127.0.0.1:1/0
                stream: "b.{collection}"
              - type: redis
                url: redis://127.0.0.1:1/0
                stream: "c.{collection}"
            """
        let result = try runCheck(checkConfig(url: emulator.url, sinks: sinks))
        #expect(result.code == 1)
        for check in [
            "webhook search-index http://127.0.0.1:\(receiver.port)", "redis cache-a redis://127.0.0.1:1",
            "redis cache-b redis://127.0.0.1:1", "redis sinks[4] redis://127.0.0.1:1",
        ] {
            #expect(line(result.lines, check)?.hasPrefix("FAIL ") == true, "\(check): \(result.lines)")
        }
    }

    /// A receiver that answers 404 or 410 would dead-letter every delivery: FAIL with what to do, for the HEAD
    /// probe and for a test event alike.
    @Test(arguments: [[], ["--send-test-event"]])
    func aMissingOrGoneWebhookEndpointFails(arguments: [String]) throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let receiver = try startReceiver()
        defer { receiver.stop() }
        let sinks = """
              - type: webhook
                url: http://127.0.0.1:\(receiver.port)/gone
              - type: webhook
                url: http://127.0.0.1:\(receiver.port)/no-such-path
            """
        let result = try runCheck(checkConfig(url: emulator.url, sinks: sinks), arguments: arguments)
        #expect(result.code == 1)
        for (index, status) in [(1, 410), (2, 404)] {
            let failed = line(result.lines, "webhook sinks[\(index)] http://127.0.0.1:\(receiver.port)")
            #expect(failed?.hasPrefix("FAIL ") == true, "\(result.lines)")
            #expect(failed?.contains("HTTP \(status)") == true, "\(failed ?? "")")
            #expect(failed?.contains("dead-letter") == true, "\(failed ?? "")")
            #expect(failed?.contains("sinks[].url") == true, "\(failed ?? "")")
        }
    }

    @Test func websocketsDisabledFails() throws {
        let emulator = try Emulator(arguments: ["--websockets-enabled", "false"])
        defer { emulator.stop() }
        let result = try runCheck(checkConfig(url: emulator.url))
        #expect(result.code == 1)
        let websocket = line(result.lines, "websocket")
        #expect(websocket?.hasPrefix("FAIL websocket: WebSockets are disabled") == true, "\(result.lines)")
        #expect(websocket?.contains("WEBSOCKETS_ENABLED=true") == true)
        #expect(line(result.lines, "server")?.hasPrefix("ok   ") == true)
        #expect(line(result.lines, "credentials")?.hasPrefix("ok   ") == true)
    }

    @Test func wrongPasswordFails() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let result = try runCheck(
            checkConfig(url: emulator.url, auth: "    email: admin@example.com\n    password: not-the-password-42")
        )
        #expect(result.code == 1)
        let credentials = line(result.lines, "credentials")
        #expect(credentials?.hasPrefix("FAIL credentials: Directus rejected the login of admin@example.com") == true)
        #expect(credentials?.contains("INVALID_CREDENTIALS") == true, "\(result.lines)")
        #expect(!(result.lines.joined() + result.stderr).contains("not-the-password-42"))
    }

    @Test func loginReportsTheTokenTTL() throws {
        let emulator = try Emulator(arguments: ["--token-ttl-ms", "120000"])
        defer { emulator.stop() }
        let result = try runCheck(
            checkConfig(url: emulator.url, auth: "    email: admin@example.com\n    password: admin-password")
        )
        #expect(result.code == 0, "\(result.lines)")
        #expect(line(result.lines, "credentials")?.contains("access token TTL 2m") == true, "\(result.lines)")
        #expect(!(result.lines.joined() + result.stderr).contains("admin-password"))
    }

    @Test func unreadableCollectionFails() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let result = try runCheck(
            checkConfig(
                url: emulator.url,
                auth: "    email: reader@example.com\n    password: reader-password",
                subscriptions: "  - collection: articles\n  - collection: secrets",
                mode: "live"
            )
        )
        #expect(result.code == 1)
        #expect(line(result.lines, "collection articles")?.hasPrefix("ok   ") == true, "\(result.lines)")
        let secrets = line(result.lines, "collection secrets")
        #expect(secrets?.hasPrefix("FAIL collection secrets: not readable") == true, "\(result.lines)")
        #expect(secrets?.contains("read permission on secrets") == true)
        // Live mode: no activity checks.
        #expect(!result.lines.contains { $0.contains("activity") })
    }

    @Test func unreadableActivityLogFailsInActivityModeAndWarnsInAutoMode() throws {
        let emulator = try Emulator(arguments: ["--activity-access", "partial"])
        defer { emulator.stop() }
        let reader = "    email: reader@example.com\n    password: reader-password"
        let activity = try runCheck(checkConfig(url: emulator.url, auth: reader, mode: "activity"))
        #expect(activity.code == 1)
        let failed = line(activity.lines, "activity log")
        #expect(
            failed?.hasPrefix("FAIL activity log: this user cannot read every user's rows") == true,
            "\(activity.lines)"
        )
        #expect(failed?.contains("directus_activity") == true)

        let auto = try runCheck(checkConfig(url: emulator.url, auth: reader, mode: "auto"))
        #expect(auto.code == 0, "\(auto.lines)")
        let warned = line(auto.lines, "activity log")
        #expect(warned?.hasPrefix("ok   activity log: warning:") == true, "\(auto.lines)")
        #expect(warned?.contains("live mode") == true)
    }

    @Test func untrackedCollectionFailsInActivityMode() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let result = try runCheck(
            checkConfig(url: emulator.url, subscriptions: "  - collection: notes_untracked", mode: "activity")
        )
        #expect(result.code == 1)
        #expect(line(result.lines, "activity log")?.hasPrefix("ok   ") == true)
        let tracking = line(result.lines, "activity tracking notes_untracked")
        #expect(tracking?.hasPrefix("FAIL ") == true && tracking?.contains("activity tracking is off") == true)
    }

    /// Both sides on their defaults (Directus pings every 30s, the bridge every 25s) is fine: no warning.
    @Test func heartbeatWithBothSidesOnTheirDefaultsIsOk() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let result = try runCheck(checkConfig(url: emulator.url, heartbeat: nil))
        #expect(result.code == 0)
        #expect(
            line(result.lines, "heartbeat")
                == "ok   heartbeat: Directus pings every 30s; the bridge pings every 25s and reconnects after 50s of "
                + "silence",
            "\(result.lines)"
        )
    }

    /// A misspelt collection says it does not exist and names the one meant, not "give the role permission"; its
    /// activity tracking, refused alike, is not checked on top.
    @Test func aMisspeltCollectionDoesNotExistAndTheNearestIsSuggested() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let result = try runCheck(
            checkConfig(url: emulator.url, subscriptions: "  - collection: articels\n  - collection: tags")
        )
        #expect(result.code == 1)
        let misspelt = line(result.lines, "collection articels")
        #expect(
            misspelt?.hasPrefix("FAIL collection articels: does not exist (did you mean \"articles\"?) — ") == true)
        #expect(misspelt?.contains("fix the subscription's collection") == true, "\(result.lines)")
        #expect(line(result.lines, "activity tracking tags")?.hasPrefix("ok   ") == true, "\(result.lines)")
        #expect(!result.lines.contains { $0.contains("activity tracking articels") }, "\(result.lines)")
        #expect(!result.lines.contains { $0.contains("directus_collections") }, "\(result.lines)")
    }

    /// `check --json`: one object once every check ran, `ok` false for a failed check only (a warning passes), and
    /// nothing else on stdout.
    @Test func checkPrintsOneJSONObject() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        func document(_ result: (code: Int32?, lines: [String], stderr: String)) throws -> [String: Any] {
            #expect(result.lines.count == 1, "\(result.lines)")
            return try #require(
                (try? JSONSerialization.jsonObject(with: Data((result.lines.first ?? "").utf8))) as? [String: Any])
        }
        let passing = try runCheck(checkConfig(url: emulator.url), arguments: ["--json"])
        #expect(passing.code == 0, "\(passing.stderr)")
        let ok = try document(passing)
        #expect(ok["ok"] as? Bool == true)
        let checks = try #require(ok["checks"] as? [[String: Any]])
        let server = try #require(checks.first { $0["name"] as? String == "server" })
        #expect(server["ok"] as? Bool == true && server["status"] as? String == "ok" && server["remedy"] is NSNull)
        #expect((server["detail"] as? String)?.contains("answers GET /server/ping") == true)

        let failing = try runCheck(
            checkConfig(url: emulator.url, subscriptions: "  - collection: articels"), arguments: ["--json"])
        #expect(failing.code == 1)
        let failed = try document(failing)
        #expect(failed["ok"] as? Bool == false)
        let collection = try #require(
            (failed["checks"] as? [[String: Any]])?.first { $0["name"] as? String == "collection articels" })
        #expect(collection["ok"] as? Bool == false && collection["status"] as? String == "fail")
        #expect(collection["detail"] as? String == "does not exist (did you mean \"articles\"?)")
        #expect((collection["remedy"] as? String)?.contains("fix the subscription's collection") == true)
    }

    /// A webhook without a secret is warned about at `check` (a warning line; the exit stays 0) and at `validate`
    /// (stderr beside its `ok`).
    @Test func anUnsignedWebhookIsWarnedAboutByCheckAndValidate() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let receiver = try startReceiver()
        defer { receiver.stop() }
        let sinks = "  - type: webhook\n    url: http://127.0.0.1:\(receiver.port)/hook"
        let yaml = checkConfig(url: emulator.url, sinks: sinks)
        let result = try runCheck(yaml)
        #expect(result.code == 0, "\(result.lines)")
        let warning = result.lines.first { $0.hasPrefix("ok   sinks[1]: warning: ") }
        #expect(warning?.contains("a webhook without a secret: its deliveries are unsigned") == true, "\(result.lines)")
        #expect(warning?.contains("set secret (or secret_file)") == true)

        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "bridge-validate")
        defer { try? FileManager.default.removeItem(at: directory) }
        try yaml.write(to: directory.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
        let validate = try BridgeProcess(arguments: ["validate", "--config", "bridge.yaml"], directory: directory)
        #expect(validate.waitForExit() == 0)
        #expect(validate.lines == ["ok"])
        #expect(
            validate.stderr.contains("bridge.yaml: warning: sinks[1]: a webhook without a secret"),
            "\(validate.stderr)")
    }

    @Test func unreachableServerAndBadConfig() throws {
        let unreachable = try runCheck(checkConfig(url: "http://127.0.0.1:1"))
        #expect(unreachable.code == 1)
        #expect(unreachable.lines.count == 1)
        #expect(unreachable.lines.first?.hasPrefix("FAIL server: http://127.0.0.1:1") == true, "\(unreachable.lines)")

        let invalid = try runCheck("directus:\n  url: http://127.0.0.1:1\n  colour: blue\n")
        #expect(invalid.code == 78)
        #expect(invalid.lines.isEmpty)
        #expect(invalid.stderr.contains("bridge.yaml:"))
    }
}
