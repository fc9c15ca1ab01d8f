import BridgeTestSupport
import Foundation
import Testing

/// One row of the emulator's own activity log: what Directus recorded, the truth a run is checked against.
struct RecordedChange {
    var id: Int
    var action: String
    var key: String
}

extension Emulator {
    /// Every create, update and delete of `articles` recorded after activity id `after`, in id order.
    func recordedChanges(after: Int) throws -> [RecordedChange] {
        let filter =
            #"{"_and":[{"collection":{"_eq":"articles"}},{"action":{"_in":["create","update","delete"]}},"#
            + #"{"id":{"_gt":\#(after)}}]}"#
        let query =
            "filter=\(filter.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"
            + "&fields=id,action,item&sort=id&limit=-1"
        let answer = try rest("GET", "/activity?\(query)") as? [String: Any]
        return (answer?["data"] as? [[String: Any]] ?? []).compactMap { row in
            guard let id = row["id"] as? Int, let action = row["action"] as? String, let item = row["item"] else {
                return nil
            }
            return RecordedChange(id: id, action: action, key: "\(item)")
        }
    }
}

/// The guarantee, stated once (contract, "The delivery guarantee, per mode"; README.md "The delivery guarantee"),
/// and checked against what one sink holds.
///
/// * Activity and `auto`: every change recorded after the bridge's first start reaches the sink, except those a
///   snapshot covers (recorded at or before its watermark); the snapshot gives every item that existed at its
///   watermark; per item, changes arrive in the order Directus made them, a snapshot line before the changes after
///   its watermark; an event comes twice only with the same id, and only when the bridge crashed.
/// * Live: what the sink holds is a part of the recorded changes, in order per item, each once; every change it
///   does not hold is counted in `directus_bridge_sink_dropped_total` and named by an error-level log line.
struct DeliveryGuaranteeCheck {
    /// What Directus recorded after the bridge first started.
    var recorded: [RecordedChange]
    /// The items that existed before any change of the run.
    var initialKeys: Set<String>
    /// Whether the bridge was killed during the run.
    var crashed: Bool

    /// The snapshot's watermark, from the ids of its lines (`snap_articles_<key>_<watermark>`).
    static func watermark(of events: [DeliveredEvent]) -> Set<Int> {
        Set(events.filter { $0.event == "snapshot" }.compactMap { Int($0.id.split(separator: "_").last ?? "") })
    }

    /// What an activity-mode sink still lacks: changes not covered by the snapshot, and snapshot items (empty when
    /// `snapshotExpected` and no snapshot line arrived yet: then nothing is known to be complete).
    func missing(in events: [DeliveredEvent], snapshotExpected: Bool) -> (changes: [String], items: Set<String>)? {
        let watermark = Self.watermark(of: events).first
        if snapshotExpected && watermark == nil { return nil }
        let ids = Set(events.map(\.id))
        let changes = recorded.filter { $0.id > (watermark ?? 0) }.map { "act_\($0.id)" }.filter { !ids.contains($0) }
        guard let watermark else { return (changes, []) }
        let snapshotKeys = Set(events.filter { $0.event == "snapshot" }.map(\.key))
        return (changes, keys(at: watermark).subtracting(snapshotKeys))
    }

    /// The items that existed at activity id `watermark`.
    func keys(at watermark: Int) -> Set<String> {
        var keys = initialKeys
        for change in recorded where change.id <= watermark {
            if change.action == "create" { keys.insert(change.key) }
            if change.action == "delete" { keys.remove(change.key) }
        }
        return keys
    }

    /// Activity and `auto` mode. `snapshotExpected`: the run took a snapshot (origin snapshot or resync).
    func checkActivity(_ events: [DeliveredEvent], snapshotExpected: Bool, sourceLocation: SourceLocation) {
        let watermarks = Self.watermark(of: events)
        #expect(watermarks.count <= 1, "one snapshot watermark: \(watermarks)", sourceLocation: sourceLocation)
        #expect(!snapshotExpected || watermarks.count == 1, "no snapshot line arrived", sourceLocation: sourceLocation)
        let watermark = watermarks.first
        if let (changes, items) = missing(in: events, snapshotExpected: snapshotExpected) {
            #expect(
                changes.isEmpty, "\(changes.count) changes never arrived: \(changes.prefix(10))",
                sourceLocation: sourceLocation)
            #expect(
                items.isEmpty, "snapshot misses \(items.count) items: \(items.sorted().prefix(10))",
                sourceLocation: sourceLocation)
        }
        // Per item, by first arrival: activity ids rise, and the snapshot line (at its watermark) sits between the
        // changes it covers and those after it.
        var seen = Set<String>()
        var last: [String: Double] = [:]
        var disorder: [String] = []
        for event in events where seen.insert(event.id).inserted {
            let position: Double
            if event.event == "snapshot", let watermark {
                position = Double(watermark) + 0.5
            } else if event.id.hasPrefix("act_"), let id = Int(event.id.dropFirst(4).prefix { $0.isNumber }) {
                position = Double(id)
            } else {
                continue
            }
            if let before = last[event.key], before > position { disorder.append("\(event.key): \(event.id)") }
            last[event.key] = max(last[event.key] ?? position, position)
        }
        #expect(disorder.isEmpty, "out of item order: \(disorder.prefix(10))", sourceLocation: sourceLocation)
        if !crashed {
            let twice = events.count - seen.count
            #expect(twice == 0, "\(twice) events arrived twice without a crash", sourceLocation: sourceLocation)
        }
    }

    /// Live mode: `dropped` is the sink's `directus_bridge_sink_dropped_total`, `droppedLogged` whether an
    /// error-level line said the sink drops.
    func checkLive(_ events: [DeliveredEvent], dropped: Int, droppedLogged: Bool, sourceLocation: SourceLocation) {
        let live = events.filter { $0.origin == "live" }
        #expect(live.count == events.count, "live mode delivers live events only", sourceLocation: sourceLocation)
        #expect(Set(live.map(\.id)).count == live.count, "an event arrived twice", sourceLocation: sourceLocation)
        // Per item, what arrived is a subsequence of what Directus recorded.
        var recordedPerKey: [String: [String]] = [:]
        for change in recorded { recordedPerKey[change.key, default: []].append(change.action) }
        var deliveredPerKey: [String: [String]] = [:]
        for event in live { deliveredPerKey[event.key, default: []].append(event.event) }
        for (key, delivered) in deliveredPerKey {
            var remaining = recordedPerKey[key, default: []][...]
            let inOrder = delivered.allSatisfy { action in
                guard let index = remaining.firstIndex(of: action) else { return false }
                remaining = remaining[(index + 1)...]
                return true
            }
            #expect(inOrder, "item \(key): \(delivered) is not a part of \(recordedPerKey[key] ?? [])", sourceLocation: sourceLocation)
        }
        #expect(
            recorded.count - live.count == dropped,
            "\(recorded.count) recorded, \(live.count) delivered, \(dropped) counted as dropped",
            sourceLocation: sourceLocation)
        #expect(dropped == 0 || droppedLogged, "drops not logged", sourceLocation: sourceLocation)
    }
}
