import BridgeConfig
package import BridgeJSON

extension StatusReport {
    /// The report for programs, `status --json`: one object with the facts of `lines`, typed (README.md,
    /// "status --json"). Counts and ids are numbers; what is not known (no service to ask) is null.
    package var json: JSONValue {
        [
            "service": serviceJSON,
            "shared_state": stored.role.map(JSONValue.string) ?? .null,
            "mode": .string((modeInForce ?? config.delivery.mode).rawValue),
            "mode_in_force": .bool(modeInForce != nil),
            "activity": hasActivity
                ? [
                    "lowest_sink_cursor": Self.number(lowestSinkCursor), "head": Self.number(activityHead),
                    "lag": Self.number(activityLag), "catching_up": .bool(catchingUp),
                ] : .null,
            "subscriptions": .array(config.subscriptions.map(subscriptionJSON)),
            "sinks": .array(config.sinks.indices.map(sinkJSON)),
        ]
    }

    private var serviceJSON: JSONValue {
        switch service {
        case .unknown(let reason):
            return [
                "state": "unknown", "url": .null, "ready": .null, "role": .null, "reasons": [],
                "detail": .string(reason),
            ]
        case .notRunning(let url, let error):
            return [
                "state": "not_running", "url": .string(url), "ready": .null, "role": .null, "reasons": [],
                "detail": .string(error),
            ]
        case .running(let url, _, let ready, _):
            return [
                "state": "running", "url": .string(url), "ready": .bool(ready),
                "role": role.map(JSONValue.string) ?? .null, "reasons": .array(readinessReasons.map(JSONValue.string)),
                "detail": .null,
            ]
        }
    }

    private func subscriptionJSON(_ subscription: SubscriptionConfig) -> JSONValue {
        let sinks = sinkIDs.map { sink -> JSONValue in
            let state = subscriptionState(subscription.uid, sink: sink)
            return [
                "sink": .string(sink), "starts_after": Self.number(state.startsAfter),
                "snapshot": snapshotJSON(state.snapshot, resyncRequested: state.resyncRequested),
            ]
        }
        return [
            "uid": .string(subscription.uid), "collection": .string(subscription.collection), "sinks": .array(sinks),
        ]
    }

    private func snapshotJSON(_ snapshot: Snapshot, resyncRequested: Bool) -> JSONValue {
        let (state, watermark, progress): (String, Int64?, Progress?) =
            switch snapshot {
            case .running(let progress, let watermark): ("running", watermark, progress)
            case .resyncRequested: ("resync_requested", nil, nil)
            case .done(let watermark): ("done", watermark, nil)
            case .pending(let watermark, _, _): ("pending", watermark, nil)
            case .none: ("none", nil, nil)
            case .notStarted: ("not_started", nil, nil)
            }
        var object: JSONObject = [
            "state": .string(state), "watermark": Self.number(watermark),
            "progress": progress.map(Self.progressJSON) ?? .null, "resync_requested": .bool(resyncRequested),
        ]
        if case .pending(_, let lines, let after) = snapshot {
            // Where the next start resumes: the key as Directus answered it (null: from the first page).
            object["resume_after"] = after.flatMap { try? JSONValue.parse($0) } ?? .null
            object["lines_in_sink"] = Self.number(lines)
        }
        return .object(object)
    }

    private func sinkJSON(_ index: Int) -> JSONValue {
        let sink = config.sinks[index]
        let state = sinkState(at: index)
        return [
            "id": .string(state.id), "type": .string(sink.type), "target": .string(sink.settings.summary),
            "format": .string(sink.format.rawValue), "cursor": Self.number(state.cursor),
            "cursor_is_legacy": .bool(state.cursorIsLegacy), "lag": Self.number(state.lag),
            "backfill": state.backfill.map(Self.progressJSON) ?? .null,
            "outbox": state.outbox.map { .number(JSONNumber($0)) } ?? .null,
            "dead_letters": .number(JSONNumber(state.deadLetters)), "dropped": Self.number(state.dropped),
        ]
    }

    private static func progressJSON(_ progress: Progress) -> JSONValue {
        [
            "done": number(progress.done), "total": number(progress.total), "rate_per_second": number(progress.rate),
            "eta_seconds": number(progress.eta),
        ]
    }

    private static func number(_ value: Int64?) -> JSONValue { value.map { .number(JSONNumber($0)) } ?? .null }

    /// A measured rate or estimate; null when absent or not finite (JSON has no NaN).
    private static func number(_ value: Double?) -> JSONValue {
        value.flatMap { JSONNumber($0) }.map(JSONValue.number) ?? .null
    }
}
