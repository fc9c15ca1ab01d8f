@testable import BridgeApp
import Testing

@Suite struct CommandLineParserTests {
    @Test func parsesCommandsWithDefaults() throws {
        #expect(try CommandLineParser.parse(["run"]) == .run(configPath: "bridge.yaml"))
        #expect(try CommandLineParser.parse(["run", "--config", "x.yaml"]) == .run(configPath: "x.yaml"))
        #expect(try CommandLineParser.parse(["validate", "--config=y.yaml"]) == .validate(configPath: "y.yaml"))
        #expect(try CommandLineParser.parse(["check", "--send-test-event"])
            == .check(configPath: "bridge.yaml", sendTestEvent: true))
        #expect(try CommandLineParser.parse(["--version"]) == .version)
        #expect(try CommandLineParser.parse(["--help"]) == .help)
    }

    @Test func parsesDeadLetterFilters() throws {
        let command = try CommandLineParser.parse([
            "dlq", "replay", "--collection", "articles", "--id", "a", "--id", "b", "--since", "1h", "--dry-run",
        ])
        var expected = DeadLetterCommand(action: .replay, configPath: "bridge.yaml")
        expected.collection = "articles"
        expected.ids = ["a", "b"]
        expected.since = "1h"
        expected.dryRun = true
        #expect(command == .deadLetters(expected))
    }

    @Test(arguments: [
        ([], "missing command"),
        (["frobnicate"], "unknown command"),
        (["run", "--config"], "--config needs a value"),
        (["run", "--nope"], "unknown option --nope"),
        (["run", "extra"], "unexpected argument"),
        (["dlq"], "dlq needs an action"),
        (["dlq", "list", "--dry-run"], "unknown option --dry-run"),
        (["check", "--send-test-event=yes"], "takes no value"),
    ])
    func rejectsBadUsage(arguments: [String], message: String) {
        #expect {
            try CommandLineParser.parse(arguments)
        } throws: { error in
            (error as? UsageError)?.message.contains(message) == true
        }
    }
}
