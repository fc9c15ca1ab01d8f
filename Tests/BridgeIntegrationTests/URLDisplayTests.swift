import BridgeTestSupport
import Foundation
import Testing

/// Contract 0.3, "Showing a URL": wherever the bridge shows a URL it shows `scheme://host:port` only. Slack, Discord,
/// Teams and Zapier hooks carry their token in the path (issue 23, item 2): it must reach no log line, no command's
/// output and no endpoint (real binary, emulator, receiver).
@Suite(.serialized) struct URLDisplayTests {
    static let pathToken = "SuperSecretPathToken_abcdef"
    static let queryToken = "QuerySecret_987xyz"
    static let hookPath = "/api/webhooks/1234567/\(pathToken)"

    /// Every text that must not hold the path or the query, and that does hold `shown`.
    private func expectShownSafely(_ text: String, _ what: String, shown: String, comment: Comment? = nil) {
        for secret in [Self.pathToken, Self.queryToken, "1234567", "api/webhooks"] {
            #expect(!text.contains(secret), "\(what) shows \(secret): \(text.suffix(4000))")
        }
        #expect(text.contains(shown), "\(what) does not show \(shown): \(text.suffix(4000))")
    }

    @Test func aWebhookURLsPathAndQueryAppearInNoLogOutputOrEndpoint() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        try receiver.down()  // every attempt fails in curl: its error text and the dead letter's reason name the URL
        let url = receiver.hookURL(Self.hookPath) + "?key=\(Self.queryToken)"
        let shown = "http://127.0.0.1:\(receiver.hookPort)"
        let sinks = webhookSink(url, "retry_schedule: [100ms]\nmax_attempts: 2")
        let bridge = try BridgeProcess.run(
            config: webhookConfig(url: emulator.url, sinks: sinks, operations: true, mode: "activity"))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try emulator.create("articles", ["title": "one"])
        #expect(bridge.waitForLog("webhook delivery dead-lettered", timeout: 20), "\(bridge.stderr.suffix(3000))")

        let base = try #require(bridge.operationsURL(), "\(bridge.stderr)")
        let ready = String(decoding: try HTTPFetch.get(base + "/readyz").body, as: UTF8.self)
        #expect(ready.contains("sink_lag"), "\(ready)")
        expectShownSafely(ready, "/readyz", shown: "127.0.0.1:\(receiver.hookPort)")
        let metrics = String(decoding: try HTTPFetch.get(base + "/metrics").body, as: UTF8.self)
        expectShownSafely(metrics, "/metrics", shown: "127.0.0.1:\(receiver.hookPort)")

        let status = try BridgeProcess(arguments: ["status", "--config", "bridge.yaml"], directory: bridge.directory)
        #expect(status.waitForExit() == 0, "\(status.stderr)")
        expectShownSafely(status.lines.joined(separator: "\n") + status.stderr, "status", shown: shown)
        let check = try BridgeProcess(arguments: ["check", "--config", "bridge.yaml"], directory: bridge.directory)
        _ = check.waitForExit(timeout: 30)
        expectShownSafely(check.lines.joined(separator: "\n") + check.stderr, "check", shown: shown)
        let (listed, letters, listing) = try dlq(["list", "--json"], in: bridge.directory)
        #expect(listed == 0 && letters.count == 1, "\(letters) \(listing)")
        expectShownSafely(letters.joined(separator: "\n"), "dlq list", shown: shown)

        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
        expectShownSafely(bridge.stderr, "the log", shown: shown)
    }

    /// A URL the config refuses (user information) is named in the message without its path, query or credentials.
    @Test func aRefusedWebhookURLIsNamedWithoutItsPathQueryOrCredentials() throws {
        let url = "https://hook-user:HookPassword_42@hooks.example.com\(Self.hookPath)?key=\(Self.queryToken)"
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "url-display")
        try webhookConfig(url: "http://127.0.0.1:1", sinks: webhookSink(url)).write(
            to: directory.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
        let validate = try BridgeProcess(arguments: ["validate", "--config", "bridge.yaml"], directory: directory)
        #expect(validate.waitForExit() == 78)
        let output = validate.stderr + validate.lines.joined(separator: "\n")
        expectShownSafely(output, "validate", shown: "https://hooks.example.com:443")
        #expect(!output.contains("HookPassword_42") && !output.contains("hook-user"), "\(output)")
    }
}
