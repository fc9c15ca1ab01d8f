import BridgeTestSupport
import Foundation
import Testing

/// One point of the delivery-guarantee space (README.md, "The delivery guarantee"): where the events come from,
/// which sink takes them, what goes wrong meanwhile, and the delivery mode.
struct MatrixCase: Sendable, Hashable, CustomTestStringConvertible {
    enum Origin: String, CaseIterable, Sendable { case live, backfill, snapshot, resync }
    enum Sink: String, CaseIterable, Sendable { case ndjson, webhook, kafka, jetstream, redis, mqtt, amqp }
    enum Fault: String, CaseIterable, Sendable {
        /// The sink is unreachable (or its consumer stalled) while the changes happen, then back.
        case sinkDown = "sink-down"
        /// The sink is slow and its buffer small (`max_outbox`, `max_outstanding`, `max_queue`).
        case sinkSlow = "sink-slow"
        /// The bridge is killed with SIGKILL in the middle of the work, then started again.
        case bridgeKilled = "bridge-killed"
        /// Directus drops the realtime socket (twice) while the changes happen.
        case socketDropped = "socket-dropped"
        /// The bridge logs in with email and password and Directus expires its tokens while the changes happen.
        case tokenExpired = "token-expired"
    }
    enum Mode: String, CaseIterable, Sendable { case live, activity, auto }

    var origin: Origin
    var sink: Sink
    var fault: Fault
    var mode: Mode

    var testDescription: String { "\(origin.rawValue) × \(sink.rawValue) × \(fault.rawValue) × \(mode.rawValue)" }

    /// Whether the guarantee speaks of this point. Live mode takes no snapshot (resync refuses it) and does not
    /// read what happened while it was not connected, so it is checked for live events under the sink's own faults:
    /// there, what it does not deliver it must count as dropped.
    var isInScope: Bool {
        guard mode == .live else { return true }
        return origin == .live && (fault == .sinkDown || fault == .sinkSlow)
    }

    /// Every point in scope, in a fixed order.
    static let space: [MatrixCase] = Origin.allCases.flatMap { origin in
        Sink.allCases.flatMap { sink in
            Fault.allCases.flatMap { fault in
                Mode.allCases.map { MatrixCase(origin: origin, sink: sink, fault: fault, mode: $0) }
            }
        }
    }.filter(\.isInScope)

    /// The space in the order of `seed`, with the points that first cover every value of every axis in front: CI
    /// runs that prefix (every origin, sink, fault and mode at least once), a wider run more of the order.
    static func drawn(seed: UInt64) -> [MatrixCase] {
        var generator = SplitMix64(seed: seed)
        let shuffled = space.shuffled(using: &generator)
        var covering: [MatrixCase] = []
        var missing = Set(Origin.allCases.map { "o:\($0)" } + Sink.allCases.map { "s:\($0)" }
            + Fault.allCases.map { "f:\($0)" } + Mode.allCases.map { "m:\($0)" })
        // Greedy set cover: each step takes the point that covers most of what is still missing.
        while !missing.isEmpty {
            let best = shuffled.max { $0.values.intersection(missing).count < $1.values.intersection(missing).count }!
            covering.append(best)
            missing.subtract(best.values)
        }
        return covering + shuffled.filter { !covering.contains($0) }
    }

    private var values: Set<String> {
        ["o:\(origin)", "s:\(sink)", "f:\(fault)", "m:\(mode)"]
    }

    /// The points this run checks: `BRIDGE_MATRIX_SEED` (default 1) orders the space; `BRIDGE_MATRIX_COUNT` takes
    /// that many (`all`: the whole space; default: the covering prefix and `backpressure`, what CI runs);
    /// `BRIDGE_MATRIX_POINT` names one point instead. scripts/matrix.sh sets them and prints the seed.
    static var selected: [MatrixCase] {
        let environment = ProcessInfo.processInfo.environment
        // One point by its values (`snapshot,webhook,sink-slow,activity`), as a failed run names it.
        if let only = environment["BRIDGE_MATRIX_POINT"] {
            let values = only.split(separator: ",").map(String.init)
            guard values.count == 4, let origin = Origin(rawValue: values[0]), let sink = Sink(rawValue: values[1]),
                let fault = Fault(rawValue: values[2]), let mode = Mode(rawValue: values[3])
            else { return [] }
            return [MatrixCase(origin: origin, sink: sink, fault: fault, mode: mode)]
        }
        let seed = environment["BRIDGE_MATRIX_SEED"].flatMap { UInt64($0) } ?? 1
        let order = drawn(seed: seed)
        let points: [MatrixCase]
        switch environment["BRIDGE_MATRIX_COUNT"].map({ ($0, Int($0)) }) {
        case ("all", _)?: points = order
        case (_, let count?)? where count > 0: points = Array(order.prefix(count))
        default:
            let covering = order.prefix(coveringCount(seed: seed))
            points = Array(covering) + backpressure.filter { !covering.contains($0) }
        }
        // The seed in the run's output, so that a failure can be replayed (scripts/matrix.sh --seed).
        FileHandle.standardError.write(Data("delivery matrix: seed \(seed), \(points.count) points\n".utf8))
        return points
    }

    /// The paths that once lost items, run by CI whatever the seed draws: a snapshot or resync into a sink that is
    /// full, down or slow — webhook, both brokers, an NDJSON pipe, a redis-server down from the start — and a
    /// snapshot cut by SIGKILL.
    static let backpressure: [MatrixCase] = [
        MatrixCase(origin: .snapshot, sink: .webhook, fault: .sinkSlow, mode: .activity),
        MatrixCase(origin: .resync, sink: .webhook, fault: .sinkDown, mode: .activity),
        MatrixCase(origin: .snapshot, sink: .kafka, fault: .sinkSlow, mode: .activity),
        MatrixCase(origin: .resync, sink: .jetstream, fault: .sinkSlow, mode: .auto),
        MatrixCase(origin: .snapshot, sink: .ndjson, fault: .sinkSlow, mode: .activity),
        MatrixCase(origin: .snapshot, sink: .webhook, fault: .bridgeKilled, mode: .activity),
        MatrixCase(origin: .snapshot, sink: .redis, fault: .sinkDown, mode: .activity),
    ]

    /// How many points of `drawn(seed:)` cover every axis value.
    static func coveringCount(seed: UInt64) -> Int {
        var seen = Set<String>()
        let all = Origin.allCases.count + Sink.allCases.count + Fault.allCases.count + Mode.allCases.count
        for (index, point) in drawn(seed: seed).enumerated() {
            seen.formUnion(point.values)
            if seen.count == all { return index + 1 }
        }
        return space.count
    }
}
