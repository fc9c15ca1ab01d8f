/// One option of a command: a flag (`--json`) or an option with a value (`--config PATH`).
public struct OptionSpec: Sendable, Equatable {
    /// `--config`.
    public let name: String
    /// A one-letter alias (`-c`), if any.
    public let alias: String?
    /// What the value stands for (`PATH`); nil for a flag.
    public let value: String?
    /// One line of help.
    public let help: String

    init(_ name: String, alias: String? = nil, value: String? = nil, help: String) {
        self.name = name
        self.alias = alias
        self.value = value
        self.help = help
    }

    /// `[-c|--config PATH]`, `[--json]`: how the option appears in a usage line.
    var usage: String { "[" + (alias.map { "\($0)|" } ?? "") + name + (value.map { " \($0)" } ?? "") + "]" }
}

/// A command's syntax and help: one source for the parser (which options it takes), `COMMAND --help`, the summary
/// of `--help`, and the tests that keep the manual page and the shell completions in step with them.
public struct CommandSpec: Sendable {
    /// `run`, `dlq replay`.
    public let name: String
    /// The operand after the name (`SUBSCRIPTION_UID`), if any.
    public let operand: String?
    /// One line for the summary of `--help`.
    public let summary: String
    /// What `COMMAND --help` explains, in a few lines.
    public let description: String
    /// The options it takes, `--config` and `--help` included.
    public let options: [OptionSpec]

    /// Whether it takes the dead-letter filters (`CommandSpec.filters`).
    var takesFilters: Bool { options.contains { Self.filters.contains($0) } }

    /// `directus-bridge dlq replay [-c|--config PATH] [--dry-run] [FILTERS]`.
    var usage: String {
        let shown = options.filter { $0.name != "--help" && !Self.filters.contains($0) }.map(\.usage)
        let operands = (operand.map { [$0] } ?? []) + shown + (takesFilters ? ["[FILTERS]"] : [])
        return (["directus-bridge", name] + operands).joined(separator: " ")
    }

    /// What `directus-bridge COMMAND --help` prints.
    public var helpText: String {
        let labels = options.map { option in
            (option.alias.map { "\($0), " } ?? "    ") + option.name + (option.value.map { " \($0)" } ?? "")
        }
        let width = (labels.map(\.count).max() ?? 0) + 2
        let lines = zip(labels, options).map { label, option in
            "  " + label + String(repeating: " ", count: width - label.count) + option.help
        }
        let filters =
            takesFilters
            ? "\n\nFILTERS combine: a letter must match each one given; replay and purge exit 1 when they match none."
            : ""
        return "Usage: \(usage)\n\n\(description)\n\nOptions:\n" + lines.joined(separator: "\n") + filters
    }

    /// The option called `name` or its alias.
    func option(_ name: String) -> OptionSpec? {
        options.first { $0.name == name || $0.alias == name }
    }
}
