import BridgeActivity
import BridgeSinks
import BridgeEvents
package import BridgeConfig
import BridgeJSON
import BridgeSystem

/// What `directus-bridge status` prints: the stored state (``StateReading``) and, when the service runs, what its
/// `/metrics` and `/readyz` say. Pure: the command gathers the inputs, this only words them.
package struct StatusReport: Sendable {
    /// What is known about a running service.
    package enum Service: Sendable {
        /// `http.listen` is off (or on port 0): a running service cannot be asked.
        case unknown(reason: String)
        /// Nothing answered at `url`.
        case notRunning(url: String, error: String)
        /// It answered: its metrics, and its readiness (`/readyz` status and JSON body).
        case running(url: String, metrics: MetricSamples, ready: Bool, readiness: String)
    }

    /// The configuration.
    package var config: BridgeConfig
    /// The durable state.
    package var stored: StoredState
    /// The running service.
    package var service: Service

    /// A report.
    package init(config: BridgeConfig, stored: StoredState, service: Service) {
        self.config = config
        self.stored = stored
        self.service = service
    }

    private var metrics: MetricSamples? {
        if case .running(_, let metrics, _, _) = service { return metrics }
        return nil
    }

    /// The report, one line per item.
    package var lines: [String] {
        var lines = [serviceLine, stored.sharedState.map { "shared state  " + $0 }, modeLine, activityLine]
            .compactMap(\.self)
        lines += config.subscriptions.map(subscriptionLine)
        lines += config.sinks.enumerated().map { sinkLine($1, index: $0) }
        return lines
    }

    private var serviceLine: String {
        switch service {
        case .unknown(let reason):
            return "service       unknown (\(reason)); stored state only"
        case .notRunning(let url, let error):
            return "service       not running (no answer at \(url): \(error)); role none"
        case .running(let url, _, let ready, let readiness):
            let reasons = Self.reasons(readiness)
            let role = reasons.contains { $0.contains("standby") } ? "standby" : "active"
            let state = ready ? "ready" : "not ready (\(reasons.joined(separator: "; ")))"
            return "service       running at \(url), \(state); role \(role)"
        }
    }

    private var modeLine: String {
        let running = metrics.flatMap { metrics in
            [DeliveryMode.activity, .live].first { metrics.value("directus_bridge_delivery_mode", ["mode": $0.rawValue]) == 1 }
        }
        if let running { return "mode          \(running.rawValue) (in force)" }
        return "mode          \(config.delivery.mode.rawValue) (configured)"
    }

    private var sinkIDs: [String] { SinkCatalog.identities(of: config.sinks) }

    private var activityLine: String? {
        let head = metrics?.value("directus_bridge_activity_head").map { Int64(saturating: $0) }
        guard !stored.sinkCursors.isEmpty || head != nil else {
            let place = stored.sharedState == nil ? config.delivery.stateDir : "the shared state"
            return "activity      no cursor in \(place) (never ran in activity mode there)"
        }
        var parts: [String] = []
        if let lowest = sinkIDs.compactMap({ stored.cursor(ofSink: $0)?.cursor.committed }).min() {
            parts.append("lowest sink cursor \(lowest)")
        }
        if let head { parts.append("head \(head)") }
        if let lag = metrics?.value("directus_bridge_activity_lag") { parts.append("lag \(Int64(saturating: lag))") }
        if metrics?.value("directus_bridge_activity_backfilling") == 1 { parts.append("catching up") }
        return "activity      " + parts.joined(separator: ", ")
    }

    private func subscriptionLine(_ subscription: SubscriptionConfig) -> String {
        let uid = subscription.uid
        // Each sink's reader keeps its own state of the subscription: one phrase when they agree, else per sink.
        let phrases = sinkIDs.map { (sink: $0, phrase: subscriptionPhrase(uid, sink: $0)) }
        let distinct = phrases.reduce(into: [String]()) { if !$0.contains($1.phrase) { $0.append($1.phrase) } }
        let detail =
            distinct.count == 1
            ? distinct[0] : phrases.map { "sink \($0.sink): \($0.phrase)" }.joined(separator: "; ")
        return "subscription  \(uid) (\(subscription.collection)): " + detail
    }

    private func subscriptionPhrase(_ uid: String, sink: String) -> String {
        var parts: [String] = []
        let saved = stored.subscription(uid, sink: sink)
        if let saved, saved.startID > 0 { parts.append("starts after activity id \(saved.startID)") }
        let labels = ["subscription": uid, "sink": sink]
        if let metrics, metrics.value("directus_bridge_snapshot_running", labels) == 1 {
            let done = metrics.value("directus_bridge_snapshot_done_items", labels).map { Int64(saturating: $0) } ?? 0
            let total = metrics.value("directus_bridge_snapshot_expected_items", labels).map { Int64(saturating: $0) }
            var progress = "snapshot running: \(done)" + (total.map { " of \($0) items" } ?? " items")
            // Numbers of another process: the share is computed in floating point, so no product can overflow.
            if let total, total > 0 {
                progress += " (\(Int64(saturating: min(100, max(0, Double(done) * 100 / Double(total))))) %)"
            }
            progress += ", " + Self.pace(
                rate: metrics.value("directus_bridge_snapshot_rate_items_per_second", labels),
                eta: metrics.value("directus_bridge_snapshot_eta_seconds", labels))
            parts.append(progress)
        } else if let saved, saved.resyncRequested {
            parts.append("resync requested: the next start snapshots it again")
        } else if let saved, let watermark = saved.snapshotWatermark {
            // A running bridge runs a pending snapshot after the one in progress; a stopped one at its next start.
            parts.append(
                saved.snapshotDone
                    ? "snapshot done (watermark \(watermark))"
                    : "snapshot pending (watermark \(watermark))" + (metrics == nil ? ": runs at the next start" : ""))
        } else {
            parts.append(saved == nil ? "not started yet" : "no snapshot")
        }
        return parts.joined(separator: ", ")
    }

    private func sinkLine(_ sink: SinkConfig, index: Int) -> String {
        let id = sinkIDs[index]
        let labels = ["sink": id]
        var parts: [String] = []
        if let metrics, let cursor = metrics.value("directus_bridge_sink_cursor", labels) {
            parts.append("cursor \(Int64(saturating: cursor))")
        } else if let stored = stored.cursor(ofSink: id) {
            parts.append("cursor \(stored.cursor.committed)" + (stored.legacy ? " (the 0.1 cursor it takes over)" : ""))
        }
        if let lag = metrics?.value("directus_bridge_sink_lag", labels) { parts.append("lag \(Int64(saturating: lag))") }
        if let metrics, metrics.value("directus_bridge_backfill_running", labels) == 1 {
            let done = metrics.value("directus_bridge_backfill_done_events", labels).map { Int64(saturating: $0) } ?? 0
            parts.append(
                "backfill running: \(done) events, "
                    + Self.pace(
                        rate: metrics.value("directus_bridge_backfill_rate_events_per_second", labels),
                        eta: metrics.value("directus_bridge_backfill_eta_seconds", labels)))
        }
        if sink.settings is WebhookSinkConfig {
            let depth = metrics?.value("directus_bridge_webhook_outbox_depth", labels).map { Int(saturating: $0) }
            parts.append("outbox \(depth ?? stored.outboxDepths[id] ?? 0)")
            let dead = metrics?.value("directus_bridge_webhook_dead_letter_depth", labels).map { Int(saturating: $0) }
            parts.append("dead letters \(dead ?? stored.deadLetters[id] ?? 0)")
        } else if let dead = stored.deadLetters[id], dead > 0 {
            parts.append("dead letters \(dead)")  // events a broker refused for good
        }
        if let dropped = metrics?.value("directus_bridge_sink_dropped_total", labels), dropped > 0 {
            parts.append("dropped \(Int64(saturating: dropped))")
        }
        if sink.format != .event { parts.append("format \(sink.format.rawValue)") }
        let detail = parts.isEmpty ? "" : ": " + parts.joined(separator: ", ")
        return "sink          \(id) (\(sink.settings.summary))" + detail
    }

    /// The `reasons` of a `/readyz` body.
    private static func reasons(_ readiness: String) -> [String] {
        guard let json = try? JSONValue.parse(readiness) else { return [] }
        return json["reasons"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }

    private static func pace(rate: Double?, eta: Double?) -> String {
        var text = "\(rate.map { String(Int64(saturating: $0)) } ?? "-")/s"
        if let eta, eta > 0 { text += ", about \(Int64(saturating: eta.rounded(.up))) s left" }
        return text
    }
}
