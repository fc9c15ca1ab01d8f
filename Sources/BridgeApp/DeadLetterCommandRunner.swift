import BridgeConfig
import BridgeCore
import BridgeEvents
import BridgeSinks
import BridgeStore
import BridgeSystem

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// `dlq list|replay|purge`: the dead letters (of webhook sinks, and the events a broker refused
/// for good) in `<state_dir>/webhooks.db`, read and changed beside a running bridge (WAL; a write waits up to 5 s
/// for the bridge's lock) — or, with `state.backend: jetstream`, in the shared bucket, whichever machine's bridge
/// wrote them.
///
/// `list` prints one line per letter — id, collection, key, attempts, last status, time, reason — with a header
/// when stdout is a terminal, or NDJSON with `--json`. `replay` moves the matching letters back into their sink's
/// outbox (same id and body; a running bridge sends them within a second — a webhook's signed with the secrets
/// configured then, a broker's to the topic or subject configured then; with shared state the letters are marked
/// in the bucket and the active bridge takes them in) and `purge` deletes them; both print the letters they act on,
/// and with `--dry-run` change nothing.
enum DeadLetterCommandRunner {
    static func run(_ command: DeadLetterCommand) async -> ExitCode {
        // Never contacts Directus: its section (and the secrets only it uses) need not resolve.
        guard let config = BridgeApplication.loadConfig(path: command.configPath, scope: .withoutDirectus) else {
            return .configuration
        }
        let now = Timestamp.now()
        let configuredSinks = SinkCatalog.identities(of: config.sinks)
        let sinks = command.sinks.map { resolveSink($0, configured: configuredSinks) }
        var filter = DeadLetterFilter(collection: command.collection, ids: command.ids, sinks: sinks)
        if let since = command.since {
            guard let start = parseSince(since, now: now) else {
                BridgeApplication.printError(
                    "directus-bridge: --since: expected an RFC 3339 time (2026-12-02T10:00:00Z) or a duration "
                        + "(30m, 1h, 2d), got \"\(since)\""
                )
                return .usage
            }
            filter.since = start.unixMilliseconds
        }
        let matching = filter  // a constant for the blocking work below
        // `purge --sink` of a sink no longer configured also drops the events replayed for it that no bridge delivers:
        // the rows waiting in its outbox, or with shared state the letters marked for replay in the bucket.
        let dropSinks = command.action == .purge ? sinks.filter { !configuredSinks.contains($0) } : []
        do {
            let action = command.action
            let dryRun = command.dryRun
            let work = DeadLetterWork(
                readOnly: action == .list, dryRun: dryRun || action == .list, dropSinks: dropSinks
            ) { store in try apply(action, dryRun: dryRun, filter: matching, now: now, to: store) }
            let result = try await StateBackends.make(config).deadLetters(work)
            guard let acted = result.letters else {
                BridgeApplication.printError(result.missing)
                return outcome(command, count: 0, dropped: result.dropped, configured: configuredSinks)
            }
            printLetters(acted, json: command.json)
            summarize(
                command, count: acted.count, unconfigured: unconfiguredSinks(acted, config: config),
                replayed: result.replayed)
            if !dropSinks.isEmpty {
                summarizeDropped(result.dropped, sinks: dropSinks, dryRun: command.dryRun, from: result.droppedFrom)
            }
            return outcome(command, count: acted.count, dropped: result.dropped, configured: configuredSinks)
        } catch let error as SQLiteError where error.isUnusableFile {
            // The file needs the operator (read-only, damaged): the same exit as `run` refusing it at start.
            BridgeApplication.printError("directus-bridge: dlq \(command.action.rawValue): \(error.message)")
            return .configuration
        } catch {
            BridgeApplication.printError("directus-bridge: dlq \(command.action.rawValue): \(error)")
            return .failure
        }
    }

    /// `.failure`, saying so, when the filters of a replay or purge matched nothing; else `.success` (an empty `list`
    /// of a sink that is not configured noted on stderr).
    private static func outcome(_ command: DeadLetterCommand, count: Int, dropped: Int, configured: [String])
        -> ExitCode
    {
        if let note = command.unknownSinkNote(count: count, configured: configured) {
            BridgeApplication.printError(note)
        }
        guard command.matchedNothing(count: count, dropped: dropped) else { return .success }
        BridgeApplication.printError(command.nothingMatchedMessage(configured: configured))
        return .failure
    }

    /// `--sink`: a sink's name or id as `dlq list` prints it, or a position in bridge.yaml's `sinks` (0 is the first,
    /// as in `sinks[0]` of `validate`'s messages), which names the id of the sink configured there now. A name made
    /// of digits is the sink of that name, not a position.
    static func resolveSink(_ text: String, configured: [String]) -> String {
        if !configured.contains(text), let position = Int(text), configured.indices.contains(position) {
            return configured[position]
        }
        return text
    }

    private static func summarizeDropped(_ count: Int, sinks: [String], dryRun: Bool, from place: String) {
        let noun = count == 1 ? "event" : "events"
        BridgeApplication.printError(
            "\(dryRun ? "would drop" : "dropped") \(count) \(noun) \(place) sinks no longer in the "
                + "config (\(sinks.sorted().joined(separator: ", ")))\(dryRun ? " (dry run)" : "")"
        )
    }

    /// Lists, replays or purges (or, with `--dry-run`, only lists) the letters matching `filter` in `store`.
    private static func apply(
        _ action: DeadLetterCommand.Action, dryRun: Bool, filter: DeadLetterFilter, now: Timestamp,
        to store: any DeadLetterStore
    ) throws -> [DeadLetter] {
        switch (action, dryRun) {
        case (.list, _), (.replay, true), (.purge, true): try store.deadLetters(matching: filter)
        case (.replay, false): try store.replay(matching: filter, now: now.unixMilliseconds)
        case (.purge, false): try store.purge(matching: filter)
        }
    }

    /// `--since`: an RFC 3339 time, or a duration meaning "newer than now minus the duration" (any number of days
    /// is accepted: more than the calendar holds means "since the beginning", not an overflow).
    static func parseSince(_ text: String, now: Timestamp) -> Timestamp? {
        if let time = Timestamp(rfc3339: text) { return time }
        var duration = DurationText.parse(text)
        if duration == nil, text.hasSuffix("d"), let days = Int64(text.dropLast()), days >= 0 {
            let (seconds, overflow) = days.multipliedReportingOverflow(by: 86_400)
            duration = .seconds(overflow ? Int64.max : seconds)
        }
        guard let duration else { return nil }
        let (start, overflow) = now.microsecondsSinceEpoch.subtractingReportingOverflow(duration.wholeMicroseconds)
        return Timestamp(microsecondsSinceEpoch: overflow ? Int64.min : start)
    }

    private static func printLetters(_ letters: [DeadLetter], json: Bool) {
        let lines = json ? letters.map(jsonLine) : rows(letters, header: isatty(1) == 1)
        for line in lines { BridgeApplication.printOutput(line) }
    }

    /// The listing's lines: one per letter — id, collection, key, attempts, last status, time, sink, reason — in
    /// aligned columns, after a header line when `header` is set (stdout is a terminal). Every text is cleaned and
    /// bounded (`PeerText`): a key, an id or a reason came from Directus, a receiver or the file, and an escape
    /// sequence or a line break in one must not move the cursor or forge a row.
    static func rows(_ letters: [DeadLetter], header: Bool) -> [String] {
        func shown(_ text: String, _ maximumLength: Int = 256) -> String {
            PeerText.sanitized(text, maximumLength: maximumLength)
        }
        var rows = letters.map { letter in
            [
                shown(letter.eventID), shown(letter.collection), shown(letter.key), "\(letter.attempts)",
                letter.lastStatus.map(String.init) ?? "-", time(letter.deadAt), shown(letter.sink),
                shown(letter.reason, 1024),
            ]
        }
        if header && !rows.isEmpty {
            rows.insert(["ID", "COLLECTION", "KEY", "ATTEMPTS", "STATUS", "TIME", "SINK", "REASON"], at: 0)
        }
        let padded = 7  // every column but the reason, which is free text and comes last
        var widths = Array(repeating: 0, count: padded)
        for row in rows {
            for column in 0..<padded { widths[column] = max(widths[column], row[column].count) }
        }
        return rows.map { row in
            var line = ""
            for column in 0..<padded {
                line += row[column] + String(repeating: " ", count: widths[column] - row[column].count + 2)
            }
            return line + row[padded]
        }
    }

    /// One NDJSON object: the listing fields, the sink (and for a broker sink's letter the change, `event`), the
    /// response excerpt and the event itself as `body`.
    static func jsonLine(_ letter: DeadLetter) -> String {
        var bytes: [UInt8] = []
        func field(_ name: String, _ value: String, first: Bool = false) {
            bytes += Array((first ? "{" : ",").utf8)
            appendJSONString(name, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            appendJSONString(value, to: &bytes)
        }
        field("id", letter.eventID, first: true)
        field("collection", letter.collection)
        field("key", letter.key)
        bytes += Array(",\"attempts\":\(letter.attempts)".utf8)
        bytes += Array(",\"last_status\":\(letter.lastStatus.map(String.init) ?? "null")".utf8)
        field("time", time(letter.deadAt))
        field("created_at", time(letter.createdAt))
        field("reason", letter.reason)
        field("sink", letter.sink)
        if let event = letter.eventName { field("event", event) }  // a broker sink's letter: the change
        field("response", String(decoding: letter.response, as: UTF8.self))
        // The body is the event object exactly as it was accepted (valid JSON by construction).
        bytes += Array(",\"body\":".utf8) + (letter.body.isEmpty ? Array("null".utf8) : letter.body)
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func time(_ milliseconds: Int64) -> String {
        let (micros, overflow) = milliseconds.multipliedReportingOverflow(by: 1000)  // a value read from the file
        return Timestamp(microsecondsSinceEpoch: overflow ? (milliseconds < 0 ? .min : .max) : micros).rfc3339
    }

    /// Sinks of `letters` that bridge.yaml no longer has (their replayed events would wait for it forever).
    private static func unconfiguredSinks(_ letters: [DeadLetter], config: BridgeConfig) -> Set<String> {
        Set(letters.map(\.sink)).subtracting(SinkCatalog.identities(of: config.sinks))
    }

    private static func summarize(
        _ command: DeadLetterCommand, count: Int, unconfigured: Set<String>, replayed: String
    ) {
        let noun = count == 1 ? "dead letter" : "dead letters"
        switch (command.action, command.dryRun) {
        case (.list, _): BridgeApplication.printError("\(count) \(noun)")
        case (.replay, true): BridgeApplication.printError("would replay \(count) \(noun) (dry run)")
        case (.replay, false):
            BridgeApplication.printError("replayed \(count) \(noun): \(replayed)")
        case (.purge, true): BridgeApplication.printError("would purge \(count) \(noun) (dry run)")
        case (.purge, false): BridgeApplication.printError("purged \(count) \(noun)")
        }
        if command.action == .replay, !unconfigured.isEmpty {
            BridgeApplication.printError(
                "warning: some letters belong to sinks no longer in the config "
                    + "(\(unconfigured.sorted().joined(separator: ", "))); "
                    + "they wait until such a sink is configured again, or until `dlq purge --sink` of it drops them"
            )
        }
    }
}
