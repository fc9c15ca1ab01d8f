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
}
