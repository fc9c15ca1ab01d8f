import BridgeActivity
package import BridgeConfig
import BridgeEvents
import BridgeJSON
import BridgeSinks
import BridgeSystem

/// What `directus-bridge status` reports: the stored state (``StateReading``) and, when the service runs, what its
/// `/metrics` and `/readyz` say. Pure: the command gathers the inputs; this works out the facts, which
/// `StatusReport+Lines` words for people and `StatusReport+JSON` writes for programs, so the two never disagree.
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

    /// Long work under way (a snapshot, a backfill): how much is done, of how much, how fast, how long to go.
    package struct Progress: Sendable, Equatable {
        /// Items (snapshot) or events (backfill) done.
        package var done: Int64
        /// How many there are in all, when known.
        package var total: Int64?
        /// Per second, when measured.
        package var rate: Double?
        /// Seconds left, when estimated.
        package var eta: Double?
    }

    /// The snapshot of one subscription for one sink.
    package enum Snapshot: Sendable, Equatable {
        /// Running now, from `watermark` (the stored one: a `resync` taken while it waited for its sink shows as
        /// the newer watermark).
        case running(Progress, watermark: Int64?)
        /// `resync` asked for one; the next start takes it.
        case resyncRequested
        /// Every item of the snapshot taken at `watermark` is in the sink.
        case done(watermark: Int64)
        /// Taken at `watermark` but not finished: runs at the next start, after `after` (the last key of the last
        /// page the sink holds, JSON text; nil: from the first page), `lines` of it in the sink.
        case pending(watermark: Int64, lines: Int64, after: String?)
        /// The subscription started without one.
        case none
        /// Nothing stored for it yet.
        case notStarted
    }

    /// Where one subscription stands for one sink.
    package struct SubscriptionState: Sendable, Equatable {
        /// The activity id it starts after, once it started.
        package var startsAfter: Int64?
        /// Its snapshot.
        package var snapshot: Snapshot
        /// A `resync` is recorded and not taken yet (beside a running snapshot: `snapshot` is then `running`).
        package var resyncRequested: Bool
    }

    /// Where one sink stands.
    package struct SinkState: Sendable, Equatable {
        /// Its id.
        package var id: String
        /// Its activity cursor (the service's, else the stored one), when there is one.
        package var cursor: Int64?
        /// The stored cursor is the single one of a state directory written before 0.2, which the sink takes over.
        package var cursorIsLegacy: Bool
        /// Activity rows behind the newest (the service's).
        package var lag: Int64?
        /// A backfill running now (the service's).
        package var backfill: Progress?
        /// Events in a webhook's outbox; nil for the other sink types.
        package var outbox: Int?
        /// Dead letters (a webhook's, or events a broker refused for good).
        package var deadLetters: Int
        /// Live events dropped for it (the service's).
        package var dropped: Int64?
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

    var metrics: MetricSamples? {
        if case .running(_, let metrics, _, _) = service { return metrics }
        return nil
    }

    /// The `reasons` of the running service's `/readyz` body.
    var readinessReasons: [String] {
        guard case .running(_, _, _, let readiness) = service, let json = try? JSONValue.parse(readiness) else {
            return []
        }
        return json["reasons"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }

    /// The running service's role: standby when its readiness says so, else active.
    var role: String? {
        guard case .running = service else { return nil }
        return readinessReasons.contains { $0.contains("standby") } ? "standby" : "active"
    }

    /// The delivery mode the running service reports it is in, if it runs.
    var modeInForce: DeliveryMode? {
        metrics.flatMap { metrics in
            [DeliveryMode.activity, .live].first {
                metrics.value("directus_bridge_delivery_mode", ["mode": $0.rawValue]) == 1
            }
        }
    }

    var sinkIDs: [String] { SinkCatalog.identities(of: config.sinks) }

    /// Whether there is anything to say about the activity log: a stored cursor, or a service reporting its head.
    var hasActivity: Bool { !stored.sinkCursors.isEmpty || activityHead != nil }

    /// The lowest stored cursor of the configured sinks.
    var lowestSinkCursor: Int64? { sinkIDs.compactMap { stored.cursor(ofSink: $0)?.cursor.committed }.min() }

    /// The newest activity id (the service's).
    var activityHead: Int64? { metric("directus_bridge_activity_head") }

    /// Activity rows behind the head (the service's).
    var activityLag: Int64? { metric("directus_bridge_activity_lag_rows") }

    /// Whether the service is catching up on the activity log.
    var catchingUp: Bool { metrics?.value("directus_bridge_activity_backfilling") == 1 }

    /// Where `uid` stands for sink `sink`.
    func subscriptionState(_ uid: String, sink: String) -> SubscriptionState {
        let collection = config.subscriptions.first { $0.uid == uid }?.collection ?? ""
        var saved = stored.subscription(uid, sink: sink)
        // A state made for another collection than the one the uid reads now: the next start begins the subscription
        // as a new one (docs/RELIABILITY.md, "A subscription moved to another collection"), unless a `resync` waits.
        if let moved = saved, let recorded = moved.collection, recorded != collection, !moved.resyncRequested {
            saved = nil
        }
        let labels = ["subscription": uid, "sink": sink]
        let snapshot: Snapshot
        if let metrics, metrics.value("directus_bridge_snapshot_running", labels) == 1 {
            snapshot = .running(
                Progress(
                    done: metric("directus_bridge_snapshot_done_items", labels) ?? 0,
                    total: metric("directus_bridge_snapshot_expected_items", labels),
                    rate: metrics.value("directus_bridge_snapshot_rate_items_per_second", labels),
                    eta: metrics.value("directus_bridge_snapshot_eta_seconds", labels)
                ),
                watermark: saved?.snapshotWatermark
            )
        } else if let saved, saved.resyncRequested {
            snapshot = .resyncRequested
        } else if let saved, let watermark = saved.snapshotWatermark {
            // Where the next start resumes as it will judge the saved point: a damaged one, or one recorded for
            // another collection than the subscription's now, from the first page.
            let resume: (lines: Int64, after: String?) =
                switch saved.resumePoint(of: collection) {
                case .after(let key, let lines): (lines, key.serializedString())
                case .none, .damaged: (0, nil)
                }
            snapshot =
                saved.snapshotDone
                ? .done(watermark: watermark)
                : .pending(watermark: watermark, lines: resume.lines, after: resume.after)
        } else {
            snapshot = saved == nil ? .notStarted : .none
        }
        let startsAfter = saved.flatMap { $0.startID > 0 ? $0.startID : nil }
        return SubscriptionState(
            startsAfter: startsAfter,
            snapshot: snapshot,
            resyncRequested: saved?.resyncRequested ?? false
        )
    }

    /// Where the sink at `index` of `config.sinks` stands.
    func sinkState(at index: Int) -> SinkState {
        let id = sinkIDs[index]
        let labels = ["sink": id]
        let storedCursor = stored.cursor(ofSink: id)
        let serviceCursor = metric("directus_bridge_sink_cursor", labels)
        var backfill: Progress?
        if let metrics, metrics.value("directus_bridge_backfill_running", labels) == 1 {
            backfill = Progress(
                done: metric("directus_bridge_backfill_done_events", labels) ?? 0,
                total: nil,
                rate: metrics.value("directus_bridge_backfill_rate_events_per_second", labels),
                eta: metrics.value("directus_bridge_backfill_eta_seconds", labels)
            )
        }
        let isWebhook = config.sinks[index].settings is WebhookSinkConfig
        let outbox = metrics?.value("directus_bridge_webhook_outbox_depth", labels).map { Int(saturating: $0) }
        let dead = metrics?.value("directus_bridge_webhook_dead_letter_depth", labels).map { Int(saturating: $0) }
        return SinkState(
            id: id,
            cursor: serviceCursor ?? storedCursor?.cursor.committed,
            cursorIsLegacy: serviceCursor == nil && storedCursor?.legacy == true,
            lag: metric("directus_bridge_sink_lag_rows", labels),
            backfill: backfill,
            outbox: isWebhook ? outbox ?? stored.outboxDepths[id] ?? 0 : nil,
            // The service counts a webhook's letters; a broker sink's are counted in the store only.
            deadLetters: (isWebhook ? dead : nil) ?? stored.deadLetters[id] ?? 0,
            dropped: metric("directus_bridge_sink_dropped_total", labels)
        )
    }

    /// A metric of another process as a whole number, whatever it serves (NaN, infinities: saturated, never trapped).
    private func metric(_ name: String, _ labels: [String: String] = [:]) -> Int64? {
        metrics?.value(name, labels).map { Int64(saturating: $0) }
    }
}
