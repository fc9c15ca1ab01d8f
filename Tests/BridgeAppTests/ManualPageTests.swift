import BridgeConfig
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeApp

/// packaging/directus-bridge.1 (the .deb's man page) is written by hand; these tests keep it in step with the
/// program: every command and option of the `--help` text and every exit code has its entry.
@Suite struct ManualPageTests {
    /// The man page with roff's `\-` turned into plain hyphens, so option names read as typed.
    static let page: String = {
        let url = TestEnvironment.repositoryRoot.appendingPathComponent("packaging/directus-bridge.1")
        let text = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
        return text.replacingOccurrences(of: "\\-", with: "-")
    }()

    /// The body of section `.SH name`, up to the next section.
    static func section(_ name: String) -> String {
        guard let start = page.range(of: "\n.SH \(name)\n") else { return "" }
        let rest = page[start.upperBound...]
        return String(rest[..<(rest.range(of: "\n.SH ")?.lowerBound ?? rest.endIndex)])
    }

    /// `run`, `validate`, `check`, `dlq list`, …: what follows `directus-bridge` on the help's usage lines (an
    /// operand in capitals, `resync SUBSCRIPTION_UID`, is not part of the command).
    static let helpCommands: [String] = CommandLineParser.helpText.split(separator: "\n").compactMap { line in
        let words = line.split(separator: " ")
        guard line.hasPrefix("  directus-bridge "), !words[1].hasPrefix("-") else { return nil }
        let isSubcommand = words.count > 2 && !words[2].hasPrefix("[") && words[2].lowercased() == words[2]
        let subcommand = isSubcommand ? " \(words[2])" : ""
        return "\(words[1])\(subcommand)"
    }

    /// Every `--option` the help text names.
    static let helpOptions: Set<String> = Set(
        CommandLineParser.helpText.split(whereSeparator: { " []|\n".contains($0) })
            .filter { $0.hasPrefix("--") }.map(String.init)
    )

    @Test func helpTextListsTheCommandsThisTestLooksFor() {
        #expect(Self.helpCommands.contains("run") && Self.helpCommands.contains("dlq replay"))
        #expect(Self.helpCommands.contains("resync") && Self.helpCommands.contains("status"))
        #expect(Self.helpOptions.isSuperset(of: ["--config", "--send-test-event", "--version", "--help"]))
        #expect(Self.helpOptions.isSuperset(of: ["--log-level", "--log-format", "--json", "--sink"]))
    }

    /// The synopsis of one command: from its `.B directus-bridge NAME` line to the next `.br`.
    static func synopsis(of command: String) -> String {
        let synopsis = section("SYNOPSIS")
        guard let start = synopsis.range(of: ".B directus-bridge \(command)\n") else { return "" }
        let rest = synopsis[start.upperBound...]
        return String(rest[..<(rest.range(of: ".br")?.lowerBound ?? rest.endIndex)])
    }

    /// Each command's synopsis shows the options it takes (`CommandSpec`, what its `--help` lists), `-c` included;
    /// the dead-letter filters as FILTERS.
    @Test(arguments: CommandSpec.all.map(\.name))
    func everyCommandsSynopsisShowsItsOptions(command: String) throws {
        let spec = try #require(CommandSpec.all.first { $0.name == command })
        let synopsis = Self.synopsis(of: command)
        for option in spec.options where option.name != "--help" && !CommandSpec.filters.contains(option) {
            #expect(synopsis.contains(option.name), "the synopsis of \(command) lacks \(option.name)")
            if let alias = option.alias {
                #expect(synopsis.contains(alias), "the synopsis of \(command) lacks \(alias)")
            }
        }
        #expect(synopsis.contains("FILTERS") == spec.takesFilters, "\(command): FILTERS")
    }

    @Test(arguments: helpCommands) func everyCommandIsInTheSynopsisAndDescribed(command: String) {
        #expect(Self.section("SYNOPSIS").contains(".B directus-bridge \(command)\n"), "synopsis lacks \(command)")
        #expect(Self.section("COMMANDS").contains("\n.B \(command)\n"), "COMMANDS lacks \(command)")
    }

    @Test(arguments: helpOptions.sorted()) func everyOptionIsDescribed(option: String) {
        let options = Self.section("OPTIONS")
        let described = [".B \(option)", ".BI \(option) ", ".BR \(option) "].contains { options.contains("\n\($0)") }
        #expect(described, "OPTIONS lacks \(option)")
    }

    @Test(arguments: ExitCode.allCases) func everyExitCodeIsExplained(code: ExitCode) {
        #expect(Self.section("EXIT STATUS").contains("\n.B \(code.rawValue)\n"), "EXIT STATUS lacks \(code)")
    }

    /// The words of a piece of roff that are options (`--config`, `-c`), font escapes (`\fR`) taken out first.
    static func optionWords(_ text: String) -> Set<String> {
        let words = text.replacing(/\\f[A-Z]/, with: " ").split { !($0.isLetter || $0.isNumber || $0 == "-") }
        return Set(
            words.filter { word in
                let second = word.dropFirst().first
                return word.hasPrefix("-") && (second == "-" || second?.isLetter == true)
            }.map(String.init))
    }

    /// Every option and alias the program takes: each command's, `--version`/`-V` and `--help`/`-h`.
    static let programOptions: Set<String> = {
        var names: Set<String> = ["--version", "-V", "--help", "-h"]
        for option in CommandSpec.all.flatMap(\.options) {
            names.insert(option.name)
            if let alias = option.alias { names.insert(alias) }
        }
        return names
    }()

    /// What `directus-bridge COMMAND --help` lists, aliases included, is described under OPTIONS.
    @Test(arguments: CommandSpec.all.map(\.name)) func everyOptionOfACommandsHelpIsDescribed(command: String) throws {
        let spec = try #require(CommandSpec.named(command))
        let described = Self.optionWords(Self.section("OPTIONS"))
        for option in spec.options {
            #expect(described.contains(option.name), "OPTIONS lacks \(option.name) of \(command)")
            #expect(spec.helpText.contains(option.name))
            if let alias = option.alias {
                #expect(described.contains(alias), "OPTIONS lacks \(alias) (\(option.name)) of \(command)")
            }
        }
    }

    /// The reverse: the synopsis and OPTIONS name no option the program does not take (a renamed or removed one).
    @Test func everyOptionTheManualNamesIsTheProgramsOwn() {
        let named = Self.optionWords(Self.section("SYNOPSIS") + "\n" + Self.section("OPTIONS"))
        #expect(named.count >= 12, "\(named.sorted())")
        let unknown = named.subtracting(Self.programOptions)
        #expect(unknown.isEmpty, "not options of the program: \(unknown.sorted())")
    }

    /// The reverse for commands: each `directus-bridge NAME` of the synopsis is a command of the program.
    @Test func everyCommandTheSynopsisShowsIsTheProgramsOwn() {
        let shown = Self.section("SYNOPSIS").split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix(".B directus-bridge ") else { return nil }
            return String(line.dropFirst(".B directus-bridge ".count))
        }
        #expect(shown.count == CommandSpec.all.count)
        #expect(Set(shown) == Set(CommandSpec.all.map(\.name)))
    }

    /// Every `directus-bridge …` command line of EXAMPLES parses as the program would parse it.
    @Test func everyExampleParses() throws {
        let examples = Self.section("EXAMPLES").replacingOccurrences(of: "\\e", with: "")
        var parsed = 0
        for line in examples.split(separator: "\n") {
            let words = line.split(separator: " ").map(String.init)
            for (index, word) in words.enumerated()
            where word == "directus-bridge" && index + 1 < words.count && (index == 0 || words[index - 1] != "-u") {
                let arguments = words[(index + 1)...].prefix { $0 != "|" }.map { $0.trimmingCharacters(in: ["'"]) }
                #expect(throws: Never.self, "\(line)") { _ = try CommandLineParser.parse(Array(arguments)) }
                parsed += 1
            }
        }
        #expect(parsed >= 8, "the examples this test found: \(parsed)")
    }

    /// FILES names every file the .deb installs (scripts/package.sh's `install … "$TREE/PATH"`), but for the binary,
    /// the page itself and packaging metadata.
    @Test func everyInstalledFileIsListed() throws {
        let url = TestEnvironment.repositoryRoot.appendingPathComponent("scripts/package.sh")
        let script = try String(contentsOf: url, encoding: .utf8)
        let files = Self.section("FILES")
        var installed: [String] = []
        for match in script.matches(of: /^install -D [^\n]*"\$TREE\/([^"]+)"$/.anchorsMatchLineEndings()) {
            let path = "/" + match.output.1.replacingOccurrences(of: "$NAME", with: "directus-bridge")
            if ["/usr/bin/", "/usr/share/lintian/"].contains(where: { path.hasPrefix($0) }) { continue }
            installed.append(path)
            #expect(files.contains("\n.B \(path)\n"), "FILES lacks \(path), which the .deb installs")
        }
        #expect(installed.count >= 8, "\(installed)")
    }

    /// ENVIRONMENT explains the configuration from the environment (`DIRECTUS_BRIDGE__KEY__KEY`), the JSON log copy,
    /// and every variable the packaged configuration reads.
    @Test func everyEnvironmentVariableIsExplained() throws {
        let environment = Self.section("ENVIRONMENT")
        #expect(environment.contains(".BI \(EnvironmentOverrides.prefix) KEY __ KEY"))
        #expect(environment.contains("\n.B \(LogHandlerFactory.jsonCopyVariable)\n"))
        let url = TestEnvironment.repositoryRoot.appendingPathComponent("packaging/bridge.yaml")
        let config = try String(contentsOf: url, encoding: .utf8)
        var variables: Set<String> = []
        for line in config.split(separator: "\n") where !line.trimmingCharacters(in: .whitespaces).hasPrefix("#") {
            let value = line.split(separator: " #", maxSplits: 1).first ?? ""
            for match in value.matches(of: /\$\{([A-Z_][A-Z0-9_]*)/) { variables.insert(String(match.output.1)) }
        }
        #expect(variables.isSuperset(of: ["DIRECTUS_URL", "CREDENTIALS_DIRECTORY", "DIRECTUS_BRIDGE_LISTEN"]))
        for variable in variables.sorted() {
            #expect(environment.contains("\n.B \(variable)\n"), "ENVIRONMENT lacks \(variable) (packaging/bridge.yaml)")
        }
    }
}
