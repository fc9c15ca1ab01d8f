import BridgeConfig
import BridgeSinks
import BridgeSystem

extension StatusReport {
    /// The report for people, one line per item (README.md, "Status").
    package var lines: [String] {
        var lines = [serviceLine, stored.role.map { "shared state  " + $0 }, modeLine, activityLine]
            .compactMap(\.self)
        lines += config.subscriptions.map(subscriptionLine)
        lines += config.sinks.indices.map(sinkLine)
        return lines
    }

    private var serviceLine: String {
        switch service {
        case .unknown(let reason):
            return "service       unknown (\(reason)); stored state only"
        case .notRunning(let url, let error):
            return "service       not running (no answer at \(url): \(error)); role none"
        case .running(let url, _, let ready, _):
            let state = ready ? "ready" : "not ready (\(readinessReasons.joined(separator: "; ")))"
            return "service       running at \(url), \(state); role \(role ?? "none")"
        }
    }

    private var modeLine: String {
        if let running = modeInForce { return "mode          \(running.rawValue) (in force)" }
        return "mode          \(config.delivery.mode.rawValue) (configured)"
    }

    private var activityLine: String? {
        guard hasActivity else {
            let place = stored.location ?? config.delivery.stateDir
            return "activity      no cursor in \(place) (never ran in activity mode there)"
        }
        var parts: [String] = []
        if let lowest = lowestSinkCursor { parts.append("lowest sink cursor \(lowest)") }
        if let head = activityHead { parts.append("head \(head)") }
        if let lag = activityLag { parts.append("lag \(lag)") }
        if catchingUp { parts.append("catching up") }
        return "activity      " + parts.joined(separator: ", ")
    }

    private func subscriptionLine(_ subscription: SubscriptionConfig) -> String {
        let uid = subscription.uid
        // Each sink's reader keeps its own state of the subscription: one phrase when they agree, else per sink.
        let phrases = sinkIDs.map { (sink: $0, phrase: subscriptionPhrase(subscriptionState(uid, sink: $0))) }
        let distinct = phrases.reduce(into: [String]()) { if !$0.contains($1.phrase) { $0.append($1.phrase) } }
        let detail =
            distinct.count == 1
            ? distinct[0] : phrases.map { "sink \($0.sink): \($0.phrase)" }.joined(separator: "; ")
        return "subscription  \(uid) (\(subscription.collection)): " + detail
    }

    private func subscriptionPhrase(_ state: SubscriptionState) -> String {
        var parts: [String] = []
        if let startsAfter = state.startsAfter { parts.append("starts after activity id \(startsAfter)") }
        switch state.snapshot {
        case .running(let progress, let watermark):
            // Items read from Directus: a full or slow sink holds them back after the last page, so "100 %" alone
            // would read as done while they still wait (the snapshot is done only once the sink holds them).
            var text =
                "snapshot running" + (watermark.map { " (watermark \($0))" } ?? "") + ": \(progress.done)"
                + (progress.total.map { " of \($0) items" } ?? " items") + " read"
            // Numbers of another process: the share is computed in floating point, so no product can overflow.
            if let total = progress.total, total > 0 {
                text += " (\(Int64(saturating: min(100, max(0, Double(progress.done) * 100 / Double(total))))) %)"
                if progress.done >= total { text += ", waiting until the sink holds them all" }
            }
            parts.append(text + ", " + Self.pace(progress))
            // Recorded and not taken yet: the running bridge takes it within seconds, superseding this snapshot
            // if it is of the same sink (a stopped one shows no running snapshot).
            if state.resyncRequested { parts.append("resync requested: taken within seconds") }
        // A running bridge takes a request within seconds and runs a pending snapshot after the one in progress; a
        // stopped one does both at its next start.
        case .resyncRequested:
            parts.append(
                "resync requested: " + (metrics == nil ? "the next start snapshots it again" : "taken within seconds")
            )
        case .done(let watermark): parts.append("snapshot done (watermark \(watermark))")
        case .pending(let watermark, let lines, let after):
            // A stopped snapshot says how far its sink got: it resumes after that key.
            let resume = after.map { ", resuming after key \($0) (\(lines) lines in the sink)" } ?? ""
            parts.append(
                "snapshot pending (watermark \(watermark))" + (metrics == nil ? ": runs at the next start" : "") + resume
            )
        case .none: parts.append("no snapshot")
        case .notStarted: parts.append("not started yet")
        }
        return parts.joined(separator: ", ")
    }

    private func sinkLine(_ index: Int) -> String {
        let sink = config.sinks[index]
        let state = sinkState(at: index)
        var parts: [String] = []
        if let cursor = state.cursor {
            parts.append("cursor \(cursor)" + (state.cursorIsLegacy ? " (the 0.1 cursor it takes over)" : ""))
        }
        if let lag = state.lag { parts.append("lag \(lag)") }
        if let backfill = state.backfill {
            parts.append("backfill running: \(backfill.done) events, \(Self.pace(backfill))")
        }
        if let outbox = state.outbox {
            parts.append("outbox \(outbox)")
            parts.append("dead letters \(state.deadLetters)")
        } else if state.deadLetters > 0 {
            parts.append("dead letters \(state.deadLetters)")  // events a broker refused for good
        }
        if let dropped = state.dropped, dropped > 0 { parts.append("dropped \(dropped)") }
        if sink.format != .event { parts.append("format \(sink.format.rawValue)") }
        let detail = parts.isEmpty ? "" : ": " + parts.joined(separator: ", ")
        return "sink          \(state.id) (\(sink.settings.summary))" + detail
    }

    private static func pace(_ progress: Progress) -> String {
        var text = "\(progress.rate.map { String(Int64(saturating: $0)) } ?? "-")/s"
        if let eta = progress.eta, eta > 0 { text += ", about \(Int64(saturating: eta.rounded(.up))) s left" }
        return text
    }
}
