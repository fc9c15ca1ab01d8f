import BridgeTestSupport
import Foundation
import Testing

/// Contract "Sink names" (docs/configuration.md): a bridge run with unnamed sinks, then with names added and the
/// entries swapped in the same edit, then with the named entries swapped back, keeps each sink's cursor, outbox and
/// dead letters, and every place that names a sink — log lines, metric labels, `/readyz`, `status`, `dlq --sink` —
/// uses the one id (real binary, emulator).
@Suite(.serialized) struct SinkNameEndToEndTests {
    /// NDJSON on stdout and a webhook whose receiver dead-letters the first event (HTTP 400) and makes the others
    /// wait an hour in the outbox (503); `names` are the two entries' names (nil: unnamed), `webhookFirst` reorders.
    private func config(
        _ emulator: Emulator, _ receiver: WebhookReceiver, names: (String, String)?, webhookFirst: Bool
    ) -> String {
        var ndjson = "  - type: ndjson\n    path: \"-\"\n"
        let settings = "retry_schedule: [1h]\nmax_attempts: 5\nsecret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
        var webhook = webhookSink(receiver.hookURL(), settings)
        if let names {
            ndjson = "  - name: \(names.0)\n" + ndjson.replacingOccurrences(of: "  - type", with: "    type")
            webhook = "  - name: \(names.1)\n" + webhook.replacingOccurrences(of: "  - type", with: "    type")
        }
        return webhookConfig(
            url: emulator.url, sinks: webhookFirst ? webhook + ndjson : ndjson + webhook, operations: true,
            mode: "activity")
    }

    /// `directus-bridge <arguments> --config bridge.yaml` in `directory`: exit status and stdout lines.
    private func command(_ arguments: [String], in directory: URL) throws -> (Int32?, [String], String) {
        let process = try BridgeProcess(arguments: arguments + ["--config", "bridge.yaml"], directory: directory)
        let status = process.waitForExit()
        return (status, process.lines, process.stderr)
    }

    /// Each sink of `status --json`: id → (cursor, outbox, dead letters).
    private func sinks(in directory: URL) throws -> [String: [String: Int]] {
        let (status, lines, errors) = try command(["status", "--json"], in: directory)
        #expect(status == 0, "\(errors)")
        let json = try #require(
            lines.first.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        let sinks = try #require(json["sinks"] as? [[String: Any]])
        return Dictionary(
            uniqueKeysWithValues: sinks.map { sink in
                (
                    sink["id"] as? String ?? "",
                    [
                        "cursor": sink["cursor"] as? Int ?? -1, "outbox": sink["outbox"] as? Int ?? -1,
                        "dead_letters": sink["dead_letters"] as? Int ?? -1,
                    ]
                )
            })
    }

    /// The values of the `sink` field of every log line (`former_sink` excluded).
    private func loggedSinks(_ stderr: String) throws -> Set<String> {
        let pattern = try NSRegularExpression(pattern: #"(?<![\w.])sink=([^\s]+)"#)
        let range = NSRange(stderr.startIndex..., in: stderr)
        return Set(
            pattern.matches(in: stderr, range: range).compactMap { match in
                Range(match.range(at: 1), in: stderr).map { String(stderr[$0]) }
            })
    }

    private func stop(_ bridge: BridgeProcess) {
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(2000))")
    }

    @Test func addingNamesKeepsEachSinksProgressEvenWhileReorderingAndReorderingNamedSinksChangesNothing() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        try receiver.script(steps: [["status": 400]], defaultStep: ["status": 503])

        // 1. Unnamed: one dead letter, two events waiting in the outbox, both cursors past the three creates.
        let first = try BridgeProcess.run(config: config(emulator, receiver, names: nil, webhookFirst: false))
        let directory = first.directory
        #expect(first.waitForLog("reading the activity log"), "\(first.stderr)")
        _ = try emulator.create("articles", ["title": "dead"])
        #expect(first.waitForLog("webhook delivery dead-lettered"), "\(first.stderr.suffix(2000))")
        _ = try emulator.create("articles", ["title": "waiting 1"])
        _ = try emulator.create("articles", ["title": "waiting 2"])
        let stateDir = directory.appendingPathComponent("state")
        #expect(
            first.waitUntil(timeout: 20) { bridge in
                bridge.events.count >= 3 && OutboxProbe.pendingIDs(stateDir: stateDir).count >= 2
            })
        #expect(first.waitUntil(timeout: 20) { _ in ((try? receiver.requests()) ?? []).count >= 3 })
        stop(first)
        let before = try sinks(in: directory)
        #expect(before.count == 2, "\(before)")
        let ndjsonID = try #require(before.keys.first { $0.hasPrefix("0-ndjson-") }, "\(before)")
        let webhookID = try #require(before.keys.first { $0.hasPrefix("1-127.0.0.1:") }, "\(before)")
        #expect(before[webhookID]?["outbox"] == 2 && before[webhookID]?["dead_letters"] == 1, "\(before)")
        #expect((before[ndjsonID]?["cursor"] ?? 0) > 0, "\(before)")
        let validate = try command(["validate"], in: directory)
        #expect(validate.2.contains("sinks[0]: a sink without a name"), "\(validate.2)")

        // 2. Names added, and the entries swapped in the same edit: the same progress under the names, said at start.
        try config(emulator, receiver, names: ("file", "hook"), webhookFirst: true)
            .write(to: directory.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
        let named = try BridgeProcess(arguments: ["run", "--config", "bridge.yaml"], directory: directory)
        #expect(named.waitForLog("reading the activity log"), "\(named.stderr)")
        #expect(named.stderr.contains("sink progress kept under its new name"), "\(named.stderr)")
        #expect(named.stderr.contains("outbox and dead letters kept under the sink's new name"), "\(named.stderr)")
        stop(named)
        #expect(named.events.isEmpty, "nothing is sent again: \(named.lines)")
        let renamed = try sinks(in: directory)
        #expect(renamed == ["file": before[ndjsonID] ?? [:], "hook": before[webhookID] ?? [:]], "\(renamed)")
        let (listStatus, letters, listErrors) = try dlq(["list", "--sink", "hook", "--json"], in: directory)
        #expect(listStatus == 0 && letters.count == 1, "\(letters) \(listErrors)")
        let letter = letters.first.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(letter?["sink"] as? String == "hook", "\(letters)")
        #expect(Set(OutboxProbe.pendingIDs(stateDir: stateDir)).count == 2)

        // 3. Swapped back: nothing moves; logs, metrics, /readyz and status name the sinks by name only.
        try config(emulator, receiver, names: ("file", "hook"), webhookFirst: false)
            .write(to: directory.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
        let reordered = try BridgeProcess(arguments: ["run", "--config", "bridge.yaml"], directory: directory)
        #expect(reordered.waitForLog("reading the activity log"), "\(reordered.stderr)")
        let key = try emulator.create("articles", ["title": "after the move"])
        #expect(reordered.waitUntil(timeout: 20) { $0.events.contains { $0["key"] as? String == key } })
        #expect(reordered.events.count == 1, "only the new change: \(reordered.lines)")
        #expect(reordered.waitUntil(timeout: 20) { _ in ((try? receiver.requests()) ?? []).count >= 4 })
        let base = try #require(reordered.operationsURL(), "\(reordered.stderr)")
        let metrics = try ParsedMetrics(parsing: HTTPFetch.get(base + "/metrics").text)
        let labelled = Set(metrics.samples.values.flatMap { $0.compactMap { $0.labels["sink"] } })
        #expect(labelled == ["file", "hook"], "\(labelled)")
        #expect(metrics.samples["directus_bridge_webhook_outbox_depth"]?.first?.value == 3)
        let ready = try HTTPFetch.get(base + "/readyz").json
        #expect(Set((ready["sink_lag"] as? [String: Any])?.keys.map { $0 } ?? []) == ["file", "hook"], "\(ready)")
        let (statusCode, statusLines, _) = try command(["status"], in: directory)
        #expect(statusCode == 0)
        #expect(statusLines.contains { $0.hasPrefix("sink          hook (") }, "\(statusLines)")
        #expect(statusLines.contains { $0.hasPrefix("sink          file (") }, "\(statusLines)")
        stop(reordered)
        #expect(try loggedSinks(reordered.stderr) == ["file", "hook"], "\(reordered.stderr.suffix(3000))")
        let start = reordered.stderr.split(separator: "\n").first { $0.contains("starting") } ?? ""
        #expect(start.contains("file (ndjson:") && start.contains("hook (webhook:"), "\(start)")
        let after = try sinks(in: directory)
        #expect(after["hook"]?["outbox"] == 3 && after["hook"]?["dead_letters"] == 1, "\(after)")
        #expect((after["file"]?["cursor"] ?? 0) > (before[ndjsonID]?["cursor"] ?? 0), "\(after)")
    }
}
