import BridgeTestSupport
import Foundation
import Testing

/// Issue 25, item 3: JSON log lines carry typed values under names that never collide under dot expansion, as
/// docs/configuration.md "Log fields" documents them. `scripts/test.sh` runs the integration suite with
/// `BRIDGE_LOG_COLLECTOR` set, so every bridge leaves a JSON copy of its log, then runs this suite again with
/// `BRIDGE_LOG_COLLECTED` naming those files: every line the integration suite produced is checked here.
@Suite(.serialized) struct LogSchemaTests {
    @Test func theDocumentedFieldsAreTypedAndNeverPrefixEachOther() throws {
        let schema = try LogSchema.documented()
        #expect(schema.fields.count >= 60, "documented fields: \(schema.fields.keys.sorted())")
        let collisions = LogSchema.prefixCollisions(schema.fields.keys)
        #expect(collisions.isEmpty, "\(collisions)")
        #expect(schema.fields["count"] == .integer && schema.fields["reconnect.delay"] == .seconds)
    }

    /// The checker itself: a number as text, an undocumented name and a name under another are each found.
    @Test func theCheckerRefusesWhatALogStoreWouldMapTwice() {
        let schema = LogSchema(fields: ["count": .integer, "cursor.position": .integer, "sink": .string])
        let envelope = #"{"time":"1970-01-01T00:00:00.000Z","level":"info","logger":"x","message":"m","fields":"#
        #expect(schema.problems(ofLine: envelope + #"{"count":3,"sink":"a"}}"#).isEmpty)
        #expect(schema.problems(ofLine: envelope + #"{"count":"3"}}"#).count == 1)
        #expect(schema.problems(ofLine: envelope + #"{"count":3.5}}"#).count == 1)
        #expect(schema.problems(ofLine: envelope + #"{"cursor":1}}"#).count == 1)
        #expect(schema.problems(ofLine: envelope + #"{"sink":true}}"#).count == 1)
        #expect(schema.problems(ofLine: #"{"time":"t","level":"info","message":"m","fields":{}}"#).count == 2)
        #expect(schema.problems(ofLine: "reconnecting delay=1s").count == 1)
        #expect(
            LogSchema.prefixCollisions(["events", "events.per_second", "eventsx"]).map(\.1) == ["events.per_second"]
        )
    }

    /// A bridge logging JSON on stderr through a snapshot, webhook retries, a dead letter, stats lines and a reconnect:
    /// every line fits the schema, and the copy (`DIRECTUS_BRIDGE_JSON_LOG_FILE`) has the same lines. With
    /// `BRIDGE_LOG_COLLECTED` set, every line the integration suite's bridges logged is checked too.
    @Test func everyLoggedLineFitsTheSchema() throws {
        let schema = try LogSchema.documented()
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        let config = try retryAndDeadLetterConfig(emulator: emulator, receiver: receiver)
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "log-schema")
        try config.write(to: directory.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
        let copy = directory.appendingPathComponent("copy.ndjson")
        let bridge = try BridgeProcess(
            arguments: ["run", "-c", "bridge.yaml", "--log-format", "json"],
            directory: directory,
            environment: ["DIRECTUS_BRIDGE_JSON_LOG_FILE": copy.path]
        )
        defer { bridge.send(SIGKILL) }
        #expect(bridge.waitForLog(#""subscriptions.live":1"#), "bridge did not connect: \(bridge.stderr)")
        for title in ["one", "two", "three"] { try emulator.create("articles", ["title": title]) }
        let answered = bridge.waitUntil(timeout: 20) { _ in
            let requests = (try? receiver.requests()) ?? []
            return requests.contains { $0.status == 410 } && requests.filter(\.delivered).count >= 2
        }
        #expect(answered, "receiver saw: \(((try? receiver.requests()) ?? []).map { $0.status ?? 0 })")
        #expect(bridge.waitForLog(#""message":"stats""#), "\(bridge.stderr)")
        try emulator.control("drop", ["reset": true])
        #expect(bridge.waitUntil { $0.stderr.components(separatedBy: #""subscriptions.live":"#).count >= 3 })
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)

        let lines = bridge.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count >= 20, "\(bridge.stderr)")
        for line in lines { #expect(schema.problems(ofLine: line).isEmpty, "\(schema.problems(ofLine: line))") }
        let copied = try String(contentsOf: copy, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(copied == lines)
        for typed in [#""count":"#, #""cursor.position":"#, #""http.status":410"#, #""events.per_second":"#] {
            #expect(lines.contains { $0.contains(typed) }, "no line with \(typed)")
        }

        if let collected = ProcessInfo.processInfo.environment["BRIDGE_LOG_COLLECTED"] {
            let files = try FileManager.default.contentsOfDirectory(atPath: collected).filter {
                $0.hasSuffix(".ndjson")
            }
            var checked = 0
            var problems: [String] = []
            for file in files {
                let text = try String(contentsOfFile: collected + "/" + file, encoding: .utf8)
                for line in text.split(separator: "\n") {
                    checked += 1
                    problems += schema.problems(ofLine: String(line))
                }
            }
            // The integration suite runs well over a hundred bridges; far fewer means the collector broke.
            #expect(files.count >= 50 && checked >= 500, "\(files.count) files, \(checked) lines")
            #expect(problems.isEmpty, "\(problems.count) problems, the first: \(problems.prefix(20))")
        }
    }
}
