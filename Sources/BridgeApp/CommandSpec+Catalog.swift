import BridgeConfig

extension CommandSpec {
    /// Every command, in the order `--help` lists them (the manual page, packaging/directus-bridge.1: SYNOPSIS,
    /// COMMANDS, OPTIONS).
    public static let all: [CommandSpec] = [run, validate, check, dlqList, dlqReplay, dlqPurge, resync, status]

    /// The command called `name` (`dlq replay`).
    static func named(_ name: String) -> CommandSpec? { all.first { $0.name == name } }

    // MARK: - Options several commands share

    static let config = OptionSpec(
        "--config", alias: "-c", value: "PATH", help: "the configuration file (default ./bridge.yaml)")
    static let setting = OptionSpec(
        "--set", alias: "-s", value: "KEY.PATH=VALUE",
        help: "one configuration value over the file's (repeatable), e.g. sinks.0.path=-")
    static let help = OptionSpec("--help", alias: "-h", help: "print this help")
    static let filters = [
        OptionSpec("--collection", value: "NAME", help: "only the dead letters of collection NAME"),
        OptionSpec(
            "--since", value: "RFC3339|DURATION",
            help: "only those newer than a time (2026-01-31T12:00:00Z) or than now minus 30m, 1h, 2d"),
        OptionSpec("--id", value: "ID", help: "only the dead letter with event id ID (repeatable)"),
        OptionSpec(
            "--sink", value: "SINK",
            help: "only those of sink SINK: its name or id as dlq list prints it, or a position in sinks (repeatable)"),
    ]

    // MARK: - The commands

    static let run = CommandSpec(
        name: "run", operand: nil, summary: "run the bridge in the foreground (PATH defaults to ./bridge.yaml)",
        description: """
            Runs the bridge in the foreground until SIGINT or SIGTERM: reads Directus's changes and writes them to
            the sinks. An unreachable or restarting Directus is never fatal; the bridge retries with backoff.
            """,
        options: [
            config, setting,
            OptionSpec(
                "--log-level", value: "LEVEL",
                help: "override log.level: " + LogConfig.levelNames.joined(separator: ", ")),
            OptionSpec(
                "--log-format", value: LogConfig.formatNames.joined(separator: "|"), help: "override log.format"),
            help,
        ])

    static let validate = CommandSpec(
        name: "validate", operand: nil, summary: "check the config file; no network",
        description: """
            Reads the configuration and reports every problem on stderr as PATH:LINE:COLUMN: message (exit 78), or
            prints ok (exit 0). What deserves attention without being an error (a webhook without a secret) is
            printed on stderr as a warning. Touches nothing on the network.
            """,
        options: [config, setting, help])

    static let check = CommandSpec(
        name: "check", operand: nil, summary: "live checks against Directus, the sinks and the shared state",
        description: """
            Checks the setup against the live Directus, the sinks and the shared state, one line per check on
            stdout: "ok   CHECK: DETAIL" or "FAIL CHECK: DETAIL — WHAT TO DO". Exits 0 when every check passed, 1
            otherwise, 78 when the configuration does not load.
            """,
        options: [
            config, setting,
            OptionSpec(
                "--send-test-event",
                help: "POST a signed test event to each webhook instead of a HEAD request; want a 2xx"),
            OptionSpec("--json", help: "print one JSON object: ok, and each check's name, ok, status, detail, remedy"),
            help,
        ])

    static let dlqList = CommandSpec(
        name: "dlq list", operand: nil, summary: "list the dead letters: failed webhooks, refused broker events",
        description: """
            Lists the dead letters (webhook deliveries given up, events a broker refused for good): id, collection,
            key, attempts, last status, time, sink, reason. Works beside a running bridge.
            """,
        options: [config, setting, OptionSpec("--json", help: "print NDJSON, one object per dead letter")] + filters
            + [help])

    static let dlqReplay = CommandSpec(
        name: "dlq replay", operand: nil, summary: "move dead letters back into their sink's outbox",
        description: """
            Moves the matching dead letters back into the outbox of their sink, with the same id and body; a running
            bridge (or the next run) delivers them.
            """,
        options: [config, setting, OptionSpec("--dry-run", help: "print what would be replayed; change nothing")]
            + filters + [help])

    static let dlqPurge = CommandSpec(
        name: "dlq purge", operand: nil, summary: "delete dead letters",
        description: """
            Deletes the matching dead letters (with --sink of a sink no longer configured, also the events waiting
            in its outbox).
            """,
        options: [config, setting, OptionSpec("--dry-run", help: "print what would be deleted; change nothing")]
            + filters + [help])

    static let resync = CommandSpec(
        name: "resync", operand: "SUBSCRIPTION_UID", summary: "snapshot that subscription again",
        description: """
            Records that the subscription is snapshotted again from a fresh watermark: every matching item as a
            snapshot event, then the changes after it, into every sink that selects it (or the one --sink names).
            A running bridge acts on it within 10 seconds, a stopped one at its next start. Never contacts Directus
            and needs none of its secrets.
            """,
        options: [
            config, setting,
            OptionSpec(
                "--sink", value: "SINK", help: "that sink only: its name or id as status prints it, or its position"),
            help,
        ])

    static let status = CommandSpec(
        name: "status", operand: nil, summary: "cursors, lag, dead letters, snapshots, role",
        description: """
            Prints the service's state and role, the delivery mode, the activity cursor and lag, each
            subscription's start and snapshot, and each sink's cursor, lag, outbox and dead letters: from the state
            directory (or the shared bucket) and, when http.listen is set and the service answers, its /metrics and
            /readyz. Never contacts Directus and needs none of its secrets.
            """,
        options: [
            config, setting,
            OptionSpec("--json", help: "print one JSON object (README.md, \"status --json\")"),
            help,
        ])
}
