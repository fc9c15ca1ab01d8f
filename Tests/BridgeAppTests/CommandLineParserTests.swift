@testable import BridgeApp
import BridgeConfig
import BridgeSystem
import Testing

@Suite struct CommandLineParserTests {
    @Test func parsesCommandsWithDefaults() throws {
        #expect(try CommandLineParser.parse(["run"]) == .run(configPath: "bridge.yaml", log: LogOverrides()))
        #expect(
            try CommandLineParser.parse(["run", "--config", "x.yaml"])
                == .run(configPath: "x.yaml", log: LogOverrides()))
        #expect(try CommandLineParser.parse(["validate", "--config=y.yaml"]) == .validate(configPath: "y.yaml"))
        #expect(try CommandLineParser.parse(["check", "--send-test-event"])
            == .check(configPath: "bridge.yaml", sendTestEvent: true, json: false))
        #expect(try CommandLineParser.parse(["--version"]) == .version)
        #expect(try CommandLineParser.parse(["--help"]) == .help(command: nil))
        #expect(try CommandLineParser.parse(["status"]) == .status(configPath: "bridge.yaml", json: false))
        #expect(
            try CommandLineParser.parse(["status", "--config", "s.yaml"]) == .status(configPath: "s.yaml", json: false))
    }

    /// `-c PATH` is `--config PATH` for every command (README.md, "The command line").
    @Test(arguments: CommandSpec.all.map(\.name))
    func dashCIsTheConfigOptionOfEveryCommand(command: String) throws {
        let operand = CommandSpec.all.first { $0.name == command }?.operand == nil ? [] : ["articles"]
        let words = command.split(separator: " ").map(String.init)
        let short = try CommandLineParser.parse(words + operand + ["-c", "other.yaml"])
        let long = try CommandLineParser.parse(words + operand + ["--config", "other.yaml"])
        #expect(short == long)
        #expect(long != (try CommandLineParser.parse(words + operand)))
    }

    /// `--set KEY.PATH=VALUE` (or `-s`, or `--set=…`) for every command, repeatable, in the order given
    /// (docs/configuration.md "Settings on the command line").
    @Test(arguments: CommandSpec.all.map(\.name))
    func setIsAnOptionOfEveryCommand(command: String) throws {
        let operand = CommandSpec.all.first { $0.name == command }?.operand == nil ? [] : ["articles"]
        let words = command.split(separator: " ").map(String.init)
        let short = try CommandLineParser.parse(words + operand + ["-s", "log.level=debug", "-s", "a.0.b=x=y"])
        let long = try CommandLineParser.parse(words + operand + ["--set", "log.level=debug", "--set=a.0.b=x=y"])
        #expect(short == long)
        #expect(long != (try CommandLineParser.parse(words + operand)))
    }

    @Test func setValuesAreKeyPathsAndTheRestAfterTheFirstEquals() throws {
        let command = try CommandLineParser.parse(
            ["validate", "-c", "x.yaml", "--set", "sinks.0.path=-", "-s", "log.level="])
        let expected = ConfigSource(
            path: "x.yaml", settings: [ConfigSetting("sinks.0.path=-")!, ConfigSetting("log.level=")!])
        #expect(command == .validate(configPath: expected))
        #expect(expected.settings.map(\.path) == [["sinks", "0", "path"], ["log", "level"]])
        #expect(expected.settings.map(\.value) == ["-", ""])
        #expect(ConfigSetting("sinks.1.brokers=[\"k:9092\"]")?.value == "[\"k:9092\"]")
        // The path in messages is the file's, as before.
        #expect(expected.description == "x.yaml")
        #expect(
            try CommandLineParser.parse(["resync", "articles", "--set", "delivery.state_dir=/data"])
                == .resync(
                    uid: "articles",
                    configPath: ConfigSource(
                        path: "bridge.yaml", settings: [ConfigSetting("delivery.state_dir=/data")!]),
                    sink: nil))
    }

    /// A `--set` that is not KEY.PATH=VALUE is a usage error (exit 64) that shows what is expected.
    @Test(arguments: ["log.level", "=debug", "log..level=x", ".log=x", "log.=x"])
    func aMalformedSetIsAUsageError(argument: String) {
        #expect(ConfigSetting(argument) == nil)
        #expect(throws: UsageError.self) { try CommandLineParser.parse(["validate", "--set", argument]) }
        do {
            _ = try CommandLineParser.parse(["run", "-s", argument])
        } catch {
            #expect(error.message.contains("expected KEY.PATH=VALUE"), "\(error.message)")
        }
        #expect(throws: UsageError.self) { try CommandLineParser.parse(["validate", "--set"]) }
    }

    /// `COMMAND --help` (or `-h`, anywhere among its options) is that command's help, whatever else is there.
    @Test func helpOfOneCommand() throws {
        #expect(try CommandLineParser.parse(["run", "--help"]) == .help(command: "run"))
        #expect(try CommandLineParser.parse(["status", "-c", "x.yaml", "-h"]) == .help(command: "status"))
        #expect(try CommandLineParser.parse(["resync", "--help"]) == .help(command: "resync"))
        #expect(try CommandLineParser.parse(["dlq", "--help"]) == .help(command: "dlq"))
        #expect(try CommandLineParser.parse(["dlq", "replay", "--sink", "7", "-h"]) == .help(command: "dlq replay"))
        // After `--` it is an operand: a uid that happens to read "--help".
        #expect(
            try CommandLineParser.parse(["resync", "--", "--help"])
                == .resync(uid: "--help", configPath: "bridge.yaml", sink: nil))
        for spec in CommandSpec.all {
            #expect(spec.helpText.hasPrefix("Usage: directus-bridge \(spec.name) "), "\(spec.name)")
            for option in spec.options { #expect(spec.helpText.contains(option.name), "\(spec.name) \(option.name)") }
        }
        let dlq = CommandLineParser.helpText(for: "dlq")
        #expect(["dlq list", "dlq replay", "dlq purge"].allSatisfy { dlq.contains("directus-bridge \($0) ") })
    }

    @Test func runTakesLogOverridesAndJSONIsOnlyForCheckStatusAndDlqList() throws {
        let run = try CommandLineParser.parse(["run", "--log-level", "debug", "--log-format=json"])
        #expect(run == .run(configPath: "bridge.yaml", log: LogOverrides(level: .debug, format: .json)))
        var log = LogConfig(level: .error, format: .text)
        log = LogOverrides(level: .debug, format: .json).applied(to: log)
        #expect(log.level == .debug && log.format == .json)
        #expect(LogOverrides(format: .json).applied(to: LogConfig(level: .warning)).level == .warning)
        #expect(
            try CommandLineParser.parse(["check", "--json"])
                == .check(configPath: "bridge.yaml", sendTestEvent: false, json: true))
        #expect(try CommandLineParser.parse(["status", "--json"]) == .status(configPath: "bridge.yaml", json: true))
    }

    @Test func resyncTakesOneUidBeforeOrAfterItsOptions() throws {
        #expect(try CommandLineParser.parse(["resync", "articles"]) == .resync(uid: "articles", configPath: "bridge.yaml", sink: nil))
        #expect(
            try CommandLineParser.parse(["resync", "--config", "x.yaml", "articles"])
                == .resync(uid: "articles", configPath: "x.yaml", sink: nil))
        #expect(
            try CommandLineParser.parse(["resync", "articles", "--config=x.yaml"])
                == .resync(uid: "articles", configPath: "x.yaml", sink: nil))
        #expect(
            try CommandLineParser.parse(["resync", "--config", "x.yaml", "--", "-odd-uid"])
                == .resync(uid: "-odd-uid", configPath: "x.yaml", sink: nil))
        #expect(
            try CommandLineParser.parse(["resync", "articles", "--sink", "search-index"])
                == .resync(uid: "articles", configPath: "bridge.yaml", sink: "search-index"))
    }

    @Test func parsesDeadLetterFilters() throws {
        let command = try CommandLineParser.parse([
            "dlq", "replay", "--collection", "articles", "--id", "a", "--id", "b", "--since", "1h", "--dry-run",
            "--sink", "0-hooks:443-0a1b2c3d", "--sink", "2",
        ])
        var expected = DeadLetterCommand(action: .replay, configPath: "bridge.yaml")
        expected.collection = "articles"
        expected.ids = ["a", "b"]
        expected.sinks = ["0-hooks:443-0a1b2c3d", "2"]
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
        (["resync"], "resync needs a SUBSCRIPTION_UID"),
        (["resync", "--config", "x.yaml"], "resync needs a SUBSCRIPTION_UID"),
        (["resync", "a", "b"], "unexpected argument \"b\""),
        (["resync", "a", "--json"], "unknown option --json"),
        (["status", "extra"], "unexpected argument"),
        (["run", "--log-level", "verbose"], "--log-level: unknown value \"verbose\" (allowed: trace, debug"),
        (["run", "--log-level", "warning"], "--log-level: unknown value \"warning\" (allowed:"),
        (["run", "--log-format", "logfmt"], "--log-format: unknown value \"logfmt\" (allowed: text, json)"),
        (["validate", "--json"], "unknown option --json"),
        (["dlq", "replay", "--json"], "unknown option --json"),
        (["status", "-x"], "unknown option -x"),
    ])
    func rejectsBadUsage(arguments: [String], message: String) {
        #expect {
            try CommandLineParser.parse(arguments)
        } throws: { error in
            (error as? UsageError)?.message.contains(message) == true
        }
    }
}

/// `dlq --since` takes any duration or day count without overflowing (docs/RELIABILITY.md, "Wire numbers and
/// traps: audit").
@Suite struct DeadLetterSinceTests {
    let now = Timestamp(microsecondsSinceEpoch: 1_796_206_500_000_000)

    @Test func daysAndDurationsCountBackFromNow() {
        #expect(DeadLetterCommandRunner.parseSince("1d", now: now)?.microsecondsSinceEpoch == 1_796_120_100_000_000)
        #expect(DeadLetterCommandRunner.parseSince("90s", now: now)?.microsecondsSinceEpoch == 1_796_206_410_000_000)
        #expect(DeadLetterCommandRunner.parseSince("soon", now: now) == nil)
    }

    @Test(arguments: ["9223372036854775807d", "106751991167301d", "99999999999999d", "2562047h47m16s"])
    func hugeDurationsMeanSinceTheBeginning(text: String) throws {
        let start = try #require(DeadLetterCommandRunner.parseSince(text, now: now))
        #expect(start.microsecondsSinceEpoch < 0)
    }
}

/// `dlq --sink`: a sink id as `dlq list` prints it, or a position in `sinks` naming the sink configured there now.
@Suite struct DeadLetterSinkFilterTests {
    let configured = ["0-hooks:443-0a1b2c3d", "1-kafka-9f8e7d6c"]

    @Test func aPositionNamesTheSinkConfiguredThere() {
        #expect(DeadLetterCommandRunner.resolveSink("1", configured: configured) == "1-kafka-9f8e7d6c")
        #expect(DeadLetterCommandRunner.resolveSink("0", configured: configured) == "0-hooks:443-0a1b2c3d")
    }

    @Test func anIdOrAPositionBeyondTheConfigIsTakenAsGiven() {
        #expect(DeadLetterCommandRunner.resolveSink("2-old:80-12345678", configured: configured) == "2-old:80-12345678")
        #expect(DeadLetterCommandRunner.resolveSink("7", configured: configured) == "7")
        #expect(DeadLetterCommandRunner.resolveSink("-1", configured: configured) == "-1")
    }

    /// A sink's `name` is its id; one made of digits is that sink, not a position (docs/configuration.md, "Sink
    /// names").
    @Test func aNameIsTheSinkOfThatNameEvenWhenItIsADigit() {
        let named = ["search-index", "0", "2-kafka-9f8e7d6c"]
        #expect(DeadLetterCommandRunner.resolveSink("search-index", configured: named) == "search-index")
        #expect(DeadLetterCommandRunner.resolveSink("0", configured: named) == "0")
        #expect(DeadLetterCommandRunner.resolveSink("2", configured: named) == "2-kafka-9f8e7d6c")
    }
}
