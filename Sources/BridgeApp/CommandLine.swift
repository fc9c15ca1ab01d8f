public import BridgeConfig
public import BridgeSystem

/// A parsed command line (the manual page, packaging/directus-bridge.1: SYNOPSIS, COMMANDS).
public enum Command: Sendable, Equatable {
    /// `run`: the service, with `--log-level`/`--log-format` over the file's `log`.
    case run(configPath: ConfigSource, log: LogOverrides)
    /// `validate`: parse and check the config, touch nothing on the network.
    case validate(configPath: ConfigSource)
    /// `check`: live checks against Directus, the sinks and the shared state; `json`: one JSON object.
    case check(configPath: ConfigSource, sendTestEvent: Bool, json: Bool)
    /// `dlq list|replay|purge`: dead-lettered webhook deliveries and events a broker refused.
    case deadLetters(DeadLetterCommand)
    /// `resync SUBSCRIPTION_UID [--sink SINK]`: the running bridge (or the next run) re-snapshots that subscription,
    /// into every sink or into the one named.
    case resync(uid: String, configPath: ConfigSource, sink: String?)
    /// `status`: cursors, lag, dead letters, snapshot progress and role, from the state and a running service;
    /// `json`: one JSON object.
    case status(configPath: ConfigSource, json: Bool)
    /// `--version`.
    case version
    /// `--help` or `help` (`command` nil), or `COMMAND --help` (`run`, `dlq`, `dlq replay`).
    case help(command: String?)
}

/// `run --log-level LEVEL --log-format text|json`: what replaces the file's `log.level` and `log.format`.
public struct LogOverrides: Sendable, Equatable {
    /// `--log-level`.
    public var level: LogLevel?
    /// `--log-format`.
    public var format: LogFormat?

    /// Overrides (none by default).
    public init(level: LogLevel? = nil, format: LogFormat? = nil) {
        self.level = level
        self.format = format
    }

    /// `log` with the overrides applied.
    public func applied(to log: LogConfig) -> LogConfig {
        var log = log
        if let level { log.level = level }
        if let format { log.format = format }
        return log
    }
}

/// `dlq` subcommands and their filters.
public struct DeadLetterCommand: Sendable, Equatable {
    /// What to do with the matching dead letters.
    public enum Action: String, Sendable { case list, replay, purge }
    /// The action.
    public var action: Action
    /// The config file (for `delivery.state_dir`) and the `--set` values over it.
    public var configPath: ConfigSource
    /// `--collection NAME`.
    public var collection: String?
    /// `--since RFC3339-or-duration`, as given.
    public var since: String?
    /// `--id ID`, repeatable.
    public var ids: [String] = []
    /// `--sink NAME-OR-POSITION`, repeatable: a sink's name or id as `dlq list` prints it, or a position in `sinks`.
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

/// Parses `arguments` (without the program name), by the options each command's `CommandSpec` takes.
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
            return .help(command: nil)
        case "dlq":
            guard let actionName = rest.popFirst() else {
                throw UsageError(message: "dlq needs an action: list, replay or purge")
            }
            if isHelp(actionName) { return .help(command: "dlq") }
            guard let action = DeadLetterCommand.Action(rawValue: actionName) else {
                throw UsageError(message: "unknown dlq action \"\(actionName)\"; use list, replay or purge")
            }
            return try parse(CommandSpec.named("dlq \(action.rawValue)")!, rest)
        default:
            guard let spec = CommandSpec.named(first) else {
                throw UsageError(message: "unknown command \"\(first)\"; try 'directus-bridge --help'")
            }
            return try parse(spec, rest)
        }
    }

    /// The `--help` text: every command's usage and summary (generated from `CommandSpec.all`).
    public static let helpText: String = {
        let commands = CommandSpec.all.map { "  \($0.usage)\n      \($0.summary)" }
        let filters = CommandSpec.filters.map(\.usage).joined(separator: " ")
        return """
            directus-bridge — mirrors Directus changes to NDJSON, webhooks, Kafka, JetStream, Redis, RabbitMQ and MQTT

            Usage:
            \(commands.joined(separator: "\n"))
              FILTERS of dlq: \(filters) (--id and --sink repeatable)
              directus-bridge --version | --help
                  the version; this summary (COMMAND --help for the options of one command)

            stdout carries data only (the NDJSON stream when a sink writes to "-"); logs go to stderr.
            Exit codes: 0 clean shutdown, 1 failure, 64 usage, 77 credentials rejected, 78 configuration error.
            """
    }()

    /// What `directus-bridge COMMAND --help` prints: one command's, or for `dlq` its actions'.
    public static func helpText(for command: String) -> String {
        if let spec = CommandSpec.named(command) { return spec.helpText }
        let actions = CommandSpec.all.filter { $0.name.hasPrefix(command + " ") }
        return "Usage:\n" + actions.map { "  \($0.usage)\n      \($0.summary)" }.joined(separator: "\n")
            + "\n\nFor an action's options: directus-bridge \(command) ACTION --help"
    }

    // MARK: - Private

    /// `--help` or `-h`.
    private static func isHelp(_ argument: String) -> Bool { argument == "--help" || argument == "-h" }

    /// The arguments after the command's name, by what `spec` takes: `--help` anywhere before a `--` is its help.
    private static func parse(_ spec: CommandSpec, _ arguments: ArraySlice<String>) throws(UsageError) -> Command {
        if arguments.prefix(while: { $0 != "--" }).contains(where: isHelp) { return .help(command: spec.name) }
        var rest = arguments
        var operand: String?
        if let name = spec.operand {
            let (positional, options) = splitPositional(arguments, spec: spec)
            guard let first = positional.first else {
                throw UsageError(message: "\(spec.name) needs a \(name)")
            }
            if let extra = positional.dropFirst().first {
                throw UsageError(message: "unexpected argument \"\(extra)\" (\(spec.name) takes one \(name))")
            }
            operand = first
            rest = options
        }
        let options = try parseOptions(&rest, spec: spec)
        let configPath = ConfigSource(
            path: options.value("--config") ?? defaultConfigPath, settings: try settings(options.values["--set"] ?? []))
        switch spec.name {
        case "run":
            return .run(configPath: configPath, log: try logOverrides(options))
        case "validate":
            return .validate(configPath: configPath)
        case "check":
            return .check(
                configPath: configPath, sendTestEvent: options.flags.contains("--send-test-event"),
                json: options.flags.contains("--json"))
        case "resync":
            return .resync(uid: operand!, configPath: configPath, sink: options.value("--sink"))
        case "status":
            return .status(configPath: configPath, json: options.flags.contains("--json"))
        default:
            let action = DeadLetterCommand.Action(rawValue: String(spec.name.dropFirst("dlq ".count)))!
            var command = DeadLetterCommand(action: action, configPath: configPath)
            command.collection = options.value("--collection")
            command.since = options.value("--since")
            command.ids = options.values["--id"] ?? []
            command.sinks = options.values["--sink"] ?? []
            command.json = options.flags.contains("--json")
            command.dryRun = options.flags.contains("--dry-run")
            return .deadLetters(command)
        }
    }

    /// The `--set` values; one that is not KEY.PATH=VALUE is a usage error.
    private static func settings(_ arguments: [String]) throws(UsageError) -> [ConfigSetting] {
        var settings: [ConfigSetting] = []
        for argument in arguments {
            guard let setting = ConfigSetting(argument) else {
                throw UsageError(
                    message: "--set \"\(argument)\": expected KEY.PATH=VALUE, keys separated by dots "
                        + "(--set sinks.0.path=/data/out.ndjson)")
            }
            settings.append(setting)
        }
        return settings
    }

    private static func logOverrides(_ options: Options) throws(UsageError) -> LogOverrides {
        var overrides = LogOverrides()
        if let level = options.value("--log-level") {
            guard LogConfig.levelNames.contains(level), let parsed = LogLevel(configName: level) else {
                let problem = ConfigDecoder.unknownValueMessage(level, allowed: LogConfig.levelNames)
                throw UsageError(message: "--log-level: \(problem)")
            }
            overrides.level = parsed
        }
        if let format = options.value("--log-format") {
            guard let parsed = LogFormat(rawValue: format) else {
                let problem = ConfigDecoder.unknownValueMessage(format, allowed: LogConfig.formatNames)
                throw UsageError(message: "--log-format: \(problem)")
            }
            overrides.format = parsed
        }
        return overrides
    }

    private struct Options {
        var flags: Set<String> = []
        var values: [String: [String]] = [:]
        func value(_ name: String) -> String? { values[name]?.last }
    }

    /// The options in `rest`, by their long names; an alias (`-c`) counts as its option.
    private static func parseOptions(_ rest: inout ArraySlice<String>, spec: CommandSpec) throws(UsageError)
        -> Options
    {
        var options = Options()
        while let argument = rest.popFirst() {
            var name = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            guard let option = spec.option(name) else {
                if argument.hasPrefix("-") { throw UsageError(message: "unknown option \(name)") }
                throw UsageError(message: "unexpected argument \"\(argument)\"")
            }
            if option.value == nil {
                guard inlineValue == nil else { throw UsageError(message: "\(name) takes no value") }
                options.flags.insert(option.name)
            } else {
                guard let value = inlineValue ?? rest.popFirst(), !value.isEmpty else {
                    throw UsageError(message: "\(name) needs a value")
                }
                options.values[option.name, default: []].append(value)
            }
        }
        return options
    }

    /// Separates operands from options (`--` ends the options: a uid may start with `-` after it).
    private static func splitPositional(_ arguments: ArraySlice<String>, spec: CommandSpec)
        -> (positional: [String], options: ArraySlice<String>)
    {
        var rest = arguments
        var positional: [String] = []
        var options: ArraySlice<String> = []
        while let argument = rest.popFirst() {
            if argument == "--" {
                positional += rest
                break
            } else if spec.option(argument)?.value != nil {
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
