import BridgeConfig
import BridgeCore
import BridgeEvents
import BridgeDirectus
import BridgeActivity
import BridgeSinks
import Foundation
import Testing

@Suite struct SinkValidationTests {
    /// `minimalYAML` with the sink list's body replaced by `lines` (indented two spaces).
    func yaml(sinks lines: [String]) -> String {
        minimalYAML.replacingOnce("  - type: ndjson\n", with: lines.map { "  \($0)\n" }.joined())
    }

    func webhook(_ lines: [String]) throws -> WebhookSinkConfig? {
        try config(yaml(sinks: lines)).sinks.first?.settings(as: WebhookSinkConfig.self)
    }

    @Test func sinksAreRequiredAndNonEmpty() {
        #expect(
            issues(minimalYAML.replacingOnce("sinks:\n  - type: ndjson\n", with: "")) == [
                "bridge.yaml:1:1: missing required key \"sinks\""
            ]
        )
        #expect(
            issues(minimalYAML.replacingOnce("sinks:\n  - type: ndjson\n", with: "sinks: []\n")) == [
                "bridge.yaml:7:8: sinks: at least one sink is required"
            ]
        )
    }

    @Test func typeIsRequiredAndChecked() {
        // Every registered type is named (adding a sink type changes the lists, not this test).
        let names = SinkCatalog.configTypes.map(\.name)
        let alternatives = names.joined(separator: " or ")
        #expect(
            issues(yaml(sinks: ["- path: out.ndjson"])) == [
                "bridge.yaml:8:5: missing required key \"type\" in sinks[0] (\(alternatives))"
            ]
        )
        #expect(
            issues(yaml(sinks: ["- tpye: ndjson"])) == [
                "bridge.yaml:8:5: unknown key \"tpye\" (did you mean \"type\"?)"
            ]
        )
        #expect(
            issues(yaml(sinks: ["- type: webhok"])) == [
                "bridge.yaml:8:11: sinks[0].type: unknown value \"webhok\" (did you mean \"webhook\"? allowed: "
                    + names.joined(separator: ", ") + ")"
            ]
        )
    }

    @Test func keysOfTheOtherSinkTypeAreUnknown() {
        #expect(
            issues(yaml(sinks: ["- type: ndjson", "  url: http://h"])) == [
                "bridge.yaml:9:5: unknown key \"url\" in sinks[0] "
                    + "(allowed: name, type, path, fsync, collections, events, format)"
            ]
        )
    }

    @Test func ndjsonSinkChecks() {
        #expect(
            issues(yaml(sinks: ["- type: ndjson", "  fsync: sometimes"])) == [
                "bridge.yaml:9:12: sinks[0].fsync: unknown value \"sometimes\" (allowed: always, interval, never)"
            ]
        )
        #expect(
            issues(yaml(sinks: ["- type: ndjson", "- type: ndjson", "  path: \"-\""])) == [
                "bridge.yaml:10:11: sinks[1].path: stdout (\"-\") is already written by sinks[0]"
            ]
        )
        #expect(
            issues(yaml(sinks: ["- type: ndjson", "  path: \"\""])) == [
                "bridge.yaml:9:11: sinks[0].path must not be empty (\"-\" is stdout)"
            ]
        )
    }

    /// Two spellings of one file are one file: the claim compares the path as the kernel would resolve it
    /// (relative to the working directory, `.`/`..`/`//` folded), and the names of stdout are stdout.
    @Test func oneFileUnderTwoSpellingsIsClaimedOnce() {
        #expect(
            issues(yaml(sinks: ["- type: ndjson", "  path: out.ndjson", "- type: ndjson", "  path: ./x/..//out.ndjson"]))
                == ["bridge.yaml:11:11: sinks[1].path: \"./x/..//out.ndjson\" is already written by sinks[0]"]
        )
        let absolute = FileManager.default.currentDirectoryPath + "/out.ndjson"
        #expect(
            issues(yaml(sinks: ["- type: ndjson", "  path: out.ndjson", "- type: ndjson", "  path: \(absolute)"]))
                == ["bridge.yaml:11:11: sinks[1].path: \"\(absolute)\" is already written by sinks[0]"]
        )
        #expect(
            issues(yaml(sinks: ["- type: ndjson", "- type: ndjson", "  path: /dev/stdout"])) == [
                "bridge.yaml:10:11: sinks[1].path: \"/dev/stdout\" is already written by sinks[0]"
            ]
        )
    }

    /// An NDJSON file inside `delivery.state_dir` would be written into the bridge's own SQLite files (appended to
    /// `cursor.db`, which SQLite then overwrites page by page): refused, whatever the spelling.
    @Test func anNDJSONFileInsideTheStateDirectoryIsRefused() {
        let delivery = "delivery:\n  state_dir: ./state\n"
        #expect(
            issues(yaml(sinks: ["- type: ndjson", "  path: state/cursor.db"]) + delivery) == [
                "bridge.yaml:9:11: sinks[0].path: \"state/cursor.db\" is inside delivery.state_dir (./state), which "
                    + "holds the bridge's own files"
            ]
        )
        #expect(issues(yaml(sinks: ["- type: ndjson", "  path: state-events.ndjson"]) + delivery) == ["<valid>"])
        #expect(
            issues(yaml(sinks: ["- type: ndjson", "  path: .bridge-state/events.ndjson"])) == [
                "bridge.yaml:9:11: sinks[0].path: \".bridge-state/events.ndjson\" is inside delivery.state_dir "
                    + "(./.bridge-state), which holds the bridge's own files"
            ]
        )
    }

    @Test func filtersMustNameSubscribedCollectionsAndKnownEvents() {
        #expect(
            issues(yaml(sinks: ["- type: ndjson", "  collections: [artcles]", "  events: [snapshot, removed]"])) == [
                "bridge.yaml:9:19: sinks[0].collections[0]: \"artcles\" is not a subscribed collection (did you mean "
                    + "\"articles\"?)",
                "bridge.yaml:10:24: sinks[0].events[1]: unknown event \"removed\" (allowed: create, update, delete, "
                    + "snapshot)",
            ]
        )
    }

    @Test func webhookNeedsAnHTTPURL() {
        #expect(
            issues(yaml(sinks: ["- type: webhook"])) == [
                "bridge.yaml:8:5: missing required key \"url\" in sinks[0] (webhook sinks need one)"
            ]
        )
        #expect(
            issues(yaml(sinks: ["- type: webhook", "  url: mailto:x@y"])) == [
                "bridge.yaml:9:10: sinks[0].url must be an absolute URL starting with http:// or https://"
            ]
        )
    }

    @Test func webhookRanges() {
        #expect(
            issues(yaml(sinks: ["- type: webhook", "  url: http://h", "  max_attempts: 0", "  max_in_flight: 5000"]))
                == [
                    "bridge.yaml:10:19: sinks[0].max_attempts must be between 1 and 1000, got 0",
                    "bridge.yaml:11:20: sinks[0].max_in_flight must be between 1 and 1024, got 5000",
                ]
        )
        #expect(
            issues(yaml(sinks: ["- type: webhook", "  url: http://h", "  max_in_flight: \"8\""])) == [
                "bridge.yaml:10:20: sinks[0].max_in_flight: expected a whole number, got the quoted string \"8\""
            ]
        )
        #expect(
            issues(yaml(sinks: ["- type: webhook", "  url: http://h", "  max_attempts: 2.5"])) == [
                "bridge.yaml:10:19: sinks[0].max_attempts: expected a whole number, got \"2.5\""
            ]
        )
    }

    @Test func retryScheduleIsANonEmptyListOfDurations() throws {
        #expect(
            issues(yaml(sinks: ["- type: webhook", "  url: http://h", "  retry_schedule: [1s, soon, 0s]"])) == [
                "bridge.yaml:10:26: sinks[0].retry_schedule[1]: invalid duration \"soon\" (use a number and a unit: ms, "
                    + "s, m or h, e.g. \"250ms\", \"10s\", \"1m30s\")"
            ]
        )
        #expect(
            issues(yaml(sinks: ["- type: webhook", "  url: http://h", "  retry_schedule: []"])) == [
                "bridge.yaml:10:21: sinks[0].retry_schedule: list at least one delay"
            ]
        )
        let sink = try webhook(["- type: webhook", "  url: http://h", "  retry_schedule: [0s, 1m30s]"])
        #expect(sink?.retrySchedule == [.zero, .seconds(90)])
    }

    @Test func maxOutboxIsAPositiveCountWithADefault() throws {
        #expect(try webhook(["- type: webhook", "  url: http://h"])?.maxOutbox == 100_000)
        #expect(try webhook(["- type: webhook", "  url: http://h", "  max_outbox: 50"])?.maxOutbox == 50)
        #expect(
            issues(yaml(sinks: ["- type: webhook", "  url: http://h", "  max_outbox: 0"])) == [
                "bridge.yaml:10:17: sinks[0].max_outbox must be between 1 and 10000000, got 0"
            ]
        )
        #expect(
            issues(yaml(sinks: ["- type: ndjson", "  max_outbox: 5"])).first?.contains("unknown key \"max_outbox\"")
                == true
        )
    }

    @Test func secretIsAStringAListOrAFile() throws {
        #expect(try webhook(["- type: webhook", "  url: http://h", "  secret: raw"])?.signingSecrets == ["raw"])
        #expect(try webhook(["- type: webhook", "  url: http://h", "  secret: [a1, b2]"])?.signingSecrets == ["a1", "b2"])
        #expect(try webhook(["- type: webhook", "  url: http://h", "  secret: \"\""])?.signingSecrets == [])
        let files = InMemoryFiles(["/s": "whsec_AAAA\n"])
        let viaFile = try config(
            yaml(sinks: ["- type: webhook", "  url: http://h", "  secret_file: /s"]),
            files: files
        )
        #expect(viaFile.sinks.first?.settings(as: WebhookSinkConfig.self)?.signingSecrets == ["whsec_AAAA"])
    }

    @Test func whsecSecretsMustBeBase64() {
        #expect(
            issues(yaml(sinks: ["- type: webhook", "  url: http://h", "  secret: whsec_not*base64"])) == [
                "bridge.yaml:10:13: sinks[0].secret: a \"whsec_\" secret must be base64 after the prefix"
            ]
        )
    }

    @Test func secretAndSecretFileTogetherAreRejected() {
        let files = InMemoryFiles(["/s": "x"])
        #expect(
            issues(
                yaml(sinks: ["- type: webhook", "  url: http://h", "  secret: a", "  secret_file: /s"]),
                files: files
            )
                == ["bridge.yaml:11:5: sinks[0]: set \"secret\" or \"secret_file\", not both"]
        )
    }

    @Test func headersAreCheckedByName() {
        let lines = [
            "- type: webhook", "  url: http://h", "  headers:", "    Webhook-Signature: x", "    bad name: x",
            "    X-A: one", "    x-a: two", "    X-Multi: \"a\\nb\"",
        ]
        #expect(
            issues(yaml(sinks: lines)) == [
                "bridge.yaml:11:7: sinks[0].headers: \"Webhook-Signature\" is set by the bridge and cannot be configured",
                "bridge.yaml:12:7: sinks[0].headers: invalid header name \"bad name\"",
                "bridge.yaml:14:7: sinks[0].headers: header \"x-a\" is given twice",
                "bridge.yaml:15:16: sinks[0].headers.X-Multi: a header value must be one line",
            ]
        )
    }

    /// A configured header with CR, LF or NUL could end the header early and smuggle another one (docs/RELIABILITY.md
    /// "Files and transport"): a configuration error, whichever way the character is written.
    @Test(arguments: [#""a\rb""#, #""a\r\nEvil: 1""#, #""a\0b""#, #""a\x00b""#, #""\u000d""#, #""a\nb""#])
    func headerValuesWithLineBreaksOrNULAreRefused(value: String) {
        let lines = ["- type: webhook", "  url: http://h", "  headers:", "    X-Token: \(value)"]
        #expect(
            issues(yaml(sinks: lines)) == ["bridge.yaml:11:16: sinks[0].headers.X-Token: a header value must be one line"]
        )
    }

    /// `format` is a key of every sink type (docs/configuration.md "Output format"), `event` unless set.
    @Test func formatIsSharedByEverySinkTypeAndChecked() throws {
        let both = ["- type: ndjson", "  format: cloudevents", "- type: webhook", "  url: http://h", "  path: x"]
        #expect(issues(yaml(sinks: both)).count == 1, "only the webhook's path is unknown")
        let sinks = try config(yaml(sinks: ["- type: ndjson", "  format: cloudevents", "- type: webhook",
            "  url: http://h", "  format: cloudevents", "- type: webhook", "  url: http://i"])).sinks
        #expect(sinks.map(\.format) == [.cloudevents, .cloudevents, .event])
        #expect(
            issues(yaml(sinks: ["- type: webhook", "  url: http://h", "  format: CloudEvents"])) == [
                "bridge.yaml:10:13: sinks[0].format: unknown value \"CloudEvents\" (did you mean \"cloudevents\"? "
                    + "allowed: event, cloudevents)"
            ]
        )
    }
}
