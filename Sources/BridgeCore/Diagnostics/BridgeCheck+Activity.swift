internal import BridgeConfig
internal import BridgeSystem
package import BridgeEvents
internal import BridgeDirectus
internal import BridgeActivity
internal import BridgeSinks

// MARK: - Activity log (delivery.mode activity / auto)

extension BridgeCheck {
    /// Whether the activity log is readable for every user (docs/configuration.md, `delivery`) and
    /// whether each subscribed collection records activity. Nothing to check in live mode.
    ///
    /// In `auto` mode an unreadable log is a warning (the bridge runs in live mode); in `activity` mode it is a
    /// failure (`run` would exit 77). Tracking is checked only when activity mode will be used, and not for the
    /// `unreadable` collections: their line already said why, and their settings are refused alike.
    package func checkActivity(_ session: CheckSession, skipping unreadable: Set<String>) async -> [CheckResult] {
        let mode = config.delivery.mode
        guard mode != .live else { return [] }
        let readable: Bool
        do {
            readable = try await session.api.canReadAllActivity()
        } catch {
            return [
                .fail(
                    "activity log",
                    "could not tell whether directus_activity is readable: \(error)",
                    remedy: error.isRetriable ? "Directus is unhealthy; try again" : "see the error"
                )
            ]
        }
        guard readable else {
            let detail = "this user cannot read every user's rows of directus_activity"
            let grant = "give the bridge's role read access to directus_activity without a filter on user"
            if mode == .auto {
                return [
                    .warning(
                        "activity log",
                        detail + "; delivery.mode auto will use live mode",
                        remedy: grant + " to recover changes made while the bridge was down"
                    )
                ]
            }
            return [
                .fail(
                    "activity log",
                    detail + " (delivery.mode activity needs it)",
                    remedy: grant + ", or set delivery.mode: live"
                )
            ]
        }
        var results: [CheckResult] = [
            .ok("activity log", "readable for every user; delivery.mode \(mode.rawValue) will read it")
        ]
        var seen: Set<String> = []
        for subscription in config.subscriptions
        where !unreadable.contains(subscription.collection) && seen.insert(subscription.collection).inserted {
            results.append(await checkTracking(subscription.collection, session: session))
        }
        if let retention = await checkRetention(session) { results.append(retention) }
        return results
    }

    /// Whether the activity log still holds every row the saved cursor needs (docs/ARCHITECTURE.md "Activity
    /// log retention"): FAIL while rows it needs were deleted, as `run` would detect them. Nothing to say before the
    /// bridge ever saved a cursor.
    private func checkRetention(_ session: CheckSession) async -> CheckResult? {
        let name = "activity retention"
        let directory = config.delivery.stateDir
        let cursors: [String: ActivityCursor]
        do {
            cursors = try await BlockingExecutor.shared.perform { try CursorDatabase.readCursors(directory: directory) }
        } catch {
            return .fail(name, "the saved activity cursor is not readable: \(error)", remedy: "see the error")
        }
        guard !cursors.isEmpty else { return nil }
        let oldest: Int64?
        do {
            oldest = try await session.api.oldestActivityID()
        } catch {
            return .fail(name, "could not read the oldest activity row: \(error)", remedy: "see the error")
        }
        // Each sink has its own cursor: the one furthest behind decides.
        let losses = cursors.sorted { $0.key < $1.key }.compactMap { sink, cursor -> (String, [ClosedRange<Int64>])? in
            let lost = oldest.map(cursor.unresolved(below:)) ?? []
            return lost.isEmpty ? nil : (sink, lost)
        }
        let committed = cursors.values.map(\.committed).min() ?? 0
        guard let oldest, let (sink, lost) = losses.min(by: { $0.1[0].lowerBound < $1.1[0].lowerBound }),
            let first = lost.first, let last = lost.last
        else {
            return .ok(name, "the activity log holds every row after the saved cursors (from \(committed))")
        }
        let whose = sink.isEmpty ? "the saved cursor" : "the cursor of sink \(sink)"
        return .fail(
            name,
            "activity rows \(first.lowerBound)-\(last.upperBound) that \(whose) still needs were deleted "
                + "(the oldest row left is \(oldest)): \(ActivityCursor.count(lost)) ids lost to retention",
            remedy: "run the bridge: it reports the loss, snapshots the subscriptions with snapshot: true again and "
                + "goes on from the oldest row; keep Directus's ACTIVITY_RETENTION longer than the bridge may be "
                + "stopped"
        )
    }

    /// `meta.accountability` of the collection: `all` (activity and revisions), `activity`, or off.
    private func checkTracking(_ collection: String, session: CheckSession) async -> CheckResult {
        let name = "activity tracking \(collection)"
        do {
            switch try await session.api.accountability(of: collection) {
            case "all":
                return .ok(name, "activity and revisions are recorded")
            case "activity":
                return .ok(name, "activity is recorded (no revisions, so event lines carry no delta)")
            case let other:
                return .fail(
                    name,
                    "activity tracking is \(other.map { "\"\($0)\"" } ?? "off"): its changes never reach the activity log",
                    remedy: "set the collection's Activity Tracking to \"Track activity & revisions\" in Directus's "
                        + "data model settings, or set delivery.mode: live"
                )
            }
        } catch {
            return .fail(
                name,
                "the collection's settings are not readable: \(error.message)",
                remedy: "let the bridge's role read directus_collections, or set delivery.mode: live"
            )
        }
    }
}
