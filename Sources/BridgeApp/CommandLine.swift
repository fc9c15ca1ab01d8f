/// A parsed command line (the manual page, packaging/directus-bridge.1: SYNOPSIS, COMMANDS).
public enum Command: Sendable, Equatable {
    /// `run`: the service.
    case run(configPath: String)
    /// `validate`: parse and check the config, touch nothing on the network.
    case validate(configPath: String)
    /// `check`: live checks against Directus, the sinks and the shared state.
    case check(configPath: String, sendTestEvent: Bool)
    /// `dlq list|replay|purge`: dead-lettered webhook deliveries and events a broker refused.
    case deadLetters(DeadLetterCommand)
    /// `resync SUBSCRIPTION_UID [--sink SINK]`: the running bridge (or the next run) re-snapshots that subscription,
    /// into every sink or into the one named.
    case resync(uid: String, configPath: String, sink: String?)
    /// `status`: cursors, lag, dead letters, snapshot progress and role, from the state and a running service.
    case status(configPath: String)
    /// `--version`.
    case version
    /// `--help` or `help`.
    case help
}

/// `dlq` subcommands and their filters.
public struct DeadLetterCommand: Sendable, Equatable {
    /// What to do with the matching dead letters.
    public enum Action: String, Sendable { case list, replay, purge }
    /// The action.
    public var action: Action
    /// The config file (for `delivery.state_dir`).
    public var configPath: String
    /// `--collection NAME`.
    public var collection: String?
    /// `--since RFC3339-or-duration`, as given.
    public var since: String?
    /// `--id ID`, repeatable.
    public var ids: [String] = []
    /// `--sink ID-OR-POSITION`, repeatable: a sink id as `dlq list` prints it, or a position in `sinks`.
    public var sinks: [String] = []
    /// `--json` (list).
    public var json = false
    /// `--dry-run` (replay, purge).
    public var dryRun = false
}

/// A command line that does not parse; the message says what is wrong (exit 64).
public struct UsageError: Error, Equatable, CustomStringConvertible {
    /// What is wrong.
    public var message: String
    public var description: String { message }
}

/// Parses `arguments` (without the program name).
public enum CommandLineParser {
    /// The default config path.
    public static let defaultConfigPath = "bridge.yaml"

    /// Parses arguments into a command.
    public static func parse(_ arguments: [String]) throws(UsageError) -> Command {
        guard let first = arguments.first else {
            throw UsageError(message: "missing command; try 'directus-bridge --help'")
        }
        var rest = ArraySlice(arguments.dropFirst())
        switch first {
        case "--version", "-V", "version":
            try expectEnd(rest)
            return .version
        case "--help", "-h", "help":
            return .help
        case "run":
            let options = try parseOptions(&rest, flags: [], valued: ["--config"])
            return .run(configPath: options.value("--config") ?? defaultConfigPath)
        case "validate":
            let options = try parseOptions(&rest, flags: [], valued: ["--config"])
            return .validate(configPath: options.value("--config") ?? defaultConfigPath)
        case "check":
            let options = try parseOptions(&rest, flags: ["--send-test-event"], valued: ["--config"])
            return .check(
                configPath: options.value("--config") ?? defaultConfigPath,
                sendTestEvent: options.flags.contains("--send-test-event"))
        case "resync":
            let (positional, optionArguments) = splitPositional(rest, valued: ["--config", "--sink"])
            var remaining = optionArguments
            let options = try parseOptions(&remaining, flags: [], valued: ["--config", "--sink"])
            guard let uid = positional.first else { throw UsageError(message: "resync needs a SUBSCRIPTION_UID") }
            if let extra = positional.dropFirst().first {
                throw UsageError(message: "unexpected argument \"\(extra)\" (resync takes one SUBSCRIPTION_UID)")
            }
            return .resync(
                uid: uid, configPath: options.value("--config") ?? defaultConfigPath, sink: options.value("--sink"))
        case "status":
            let options = try parseOptions(&rest, flags: [], valued: ["--config"])
            return .status(configPath: options.value("--config") ?? defaultConfigPath)
        case "dlq":
            guard let actionName = rest.popFirst() else {
                throw UsageError(message: "dlq needs an action: list, replay or purge")
            }
            guard let action = DeadLetterCommand.Action(rawValue: actionName) else {
                throw UsageError(message: "unknown dlq action \"\(actionName)\"; use list, replay or purge")
            }
            var flags: Set<String> = ["--json"]
            if action != .list { flags = ["--dry-run"] }
            let options = try parseOptions(
                &rest, flags: flags, valued: ["--config", "--collection", "--since", "--id", "--sink"])
            var command = DeadLetterCommand(
                action: action, configPath: options.value("--config") ?? defaultConfigPath)
            command.collection = options.value("--collection")
            command.since = options.value("--since")
            command.ids = options.values["--id"] ?? []
            command.sinks = options.values["--sink"] ?? []
            command.json = options.flags.contains("--json")
            command.dryRun = options.flags.contains("--dry-run")
            return .deadLetters(command)
        default:
            throw UsageError(message: "unknown command \"\(first)\"; try 'directus-bridge --help'")
        }
    }

    /// The `--help` text.
    public static let helpText = """
        directus-bridge — mirrors Directus changes as NDJSON lines, signed webhooks, Kafka or JetStream messages

        Usage:
          directus-bridge run      [--config PATH]   run the bridge (PATH defaults to ./bridge.yaml)
          directus-bridge validate [--config PATH]   check the config file; no network
          directus-bridge check    [--config PATH] [--send-test-event]
                                                     live checks against Directus, the sinks and the shared state
          directus-bridge dlq list   [--config PATH] [--json] [FILTERS]
          directus-bridge dlq replay [--config PATH] [--dry-run] [FILTERS]
          directus-bridge dlq purge  [--config PATH] [--dry-run] [FILTERS]
                                                     dead letters: failed webhooks, refused broker events
              FILTERS: --collection NAME  --since RFC3339|DURATION  --id ID  --sink SINK (both repeatable)
          directus-bridge resync SUBSCRIPTION_UID [--sink SINK] [--config PATH]
                                                     snapshot a subscription again, into every sink or the
                                                     one --sink names; a running bridge does it within seconds
          directus-bridge status [--config PATH]     cursors, lag, dead letters, snapshots, role
          directus-bridge --version | --help

        stdout carries data only (the NDJSON stream when a sink writes to "-"); logs go to stderr.
        Exit codes: 0 clean shutdown, 1 failure, 64 usage, 77 credentials rejected, 78 configuration error.
        """

    // MARK: - Private

    private struct Options {
        var flags: Set<String> = []
        var values: [String: [String]] = [:]
        func value(_ name: String) -> String? { values[name]?.last }
    }

    private static func parseOptions(_ rest: inout ArraySlice<String>, flags: Set<String>, valued: Set<String>)
        throws(UsageError) -> Options
    {
        var options = Options()
        while let argument = rest.popFirst() {
            var name = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            if flags.contains(name) {
                guard inlineValue == nil else { throw UsageError(message: "\(name) takes no value") }
                options.flags.insert(name)
            } else if valued.contains(name) {
                guard let value = inlineValue ?? rest.popFirst(), !value.isEmpty else {
                    throw UsageError(message: "\(name) needs a value")
                }
                options.values[name, default: []].append(value)
            } else if argument.hasPrefix("-") {
                throw UsageError(message: "unknown option \(name)")
            } else {
                throw UsageError(message: "unexpected argument \"\(argument)\"")
            }
        }
        return options
    }

    /// Separates operands from options (`--` ends the options: a uid may start with `-` after it).
    private static func splitPositional(_ arguments: ArraySlice<String>, valued: Set<String>)
        -> (positional: [String], options: ArraySlice<String>)
    {
        var rest = arguments
        var positional: [String] = []
        var options: ArraySlice<String> = []
        while let argument = rest.popFirst() {
            if argument == "--" {
                positional += rest
                break
            } else if valued.contains(argument) {
                options.append(argument)
                if let value = rest.popFirst() { options.append(value) }
            } else if argument.hasPrefix("-") && argument != "-" {
                options.append(argument)
            } else {
                positional.append(argument)
            }
        }
        return (positional, options)
    }

    private static func expectEnd(_ rest: ArraySlice<String>) throws(UsageError) {
        if let extra = rest.first { throw UsageError(message: "unexpected argument \"\(extra)\"") }
    }
}
