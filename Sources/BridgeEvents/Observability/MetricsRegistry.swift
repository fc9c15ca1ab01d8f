internal import Synchronization

/// Prometheus metrics: counters, gauges, histograms and gauges computed at scrape time, rendered in the text
/// exposition format (version 0.0.4).
///
/// Handles (`Counter`, `Gauge`, `Histogram`) are looked up once and kept by the code that updates them; updating a
/// handle is a single atomic operation (histograms take a short lock), so the hot path pays no dictionary lookup.
public final class MetricsRegistry: Sendable {
    private struct Family {
        package var name: String
        package var help: String
        package var type: String
        package var series: [String: Series]  // keyed by rendered label set
        package var order: [String]
    }

    fileprivate enum Series: Sendable {
        case counter(Counter)
        case gauge(Gauge)
        case histogram(Histogram)
        case function(@Sendable () -> Double)
    }

    private let families = Mutex<[String: Family]>([:])
    private let familyOrder = Mutex<[String]>([])

    /// Creates an empty registry.
    public init() {}

    /// The counter `name` with `labels`, created on first use.
    public func counter(_ name: String, help: String, labels: [(String, String)] = []) -> Counter {
        let rendered = Self.renderLabels(labels)
        return register(name: name, help: help, type: "counter", labels: rendered) { .counter(Counter()) }
            .counterValue!
    }

    /// The gauge `name` with `labels`, created on first use.
    public func gauge(_ name: String, help: String, labels: [(String, String)] = []) -> Gauge {
        let rendered = Self.renderLabels(labels)
        return register(name: name, help: help, type: "gauge", labels: rendered) { .gauge(Gauge()) }.gaugeValue!
    }

    /// The histogram `name` with `labels` and upper bucket bounds `buckets` (seconds), created on first use.
    public func histogram(_ name: String, help: String, labels: [(String, String)] = [], buckets: [Double])
        -> Histogram
    {
        let rendered = Self.renderLabels(labels)
        return register(name: name, help: help, type: "histogram", labels: rendered) {
            .histogram(Histogram(buckets: buckets))
        }.histogramValue!
    }

    /// A gauge whose value `read` computes at scrape time (queue depth, outbox depth from the database, …).
    public func gaugeFunction(
        _ name: String, help: String, labels: [(String, String)] = [], read: @escaping @Sendable () -> Double
    ) {
        let rendered = Self.renderLabels(labels)
        _ = register(name: name, help: help, type: "gauge", labels: rendered, replace: true) { .function(read) }
    }

    /// A counter whose value `read` computes at scrape time from a total kept elsewhere (the kernel's CPU time).
    public func counterFunction(_ name: String, help: String, read: @escaping @Sendable () -> Double) {
        _ = register(name: name, help: help, type: "counter", labels: "", replace: true) { .function(read) }
    }

    /// The whole registry in Prometheus text format.
    public func render() -> String {
        let order = familyOrder.withLock { $0 }
        let snapshot = families.withLock { $0 }
        var out = ""
        for name in order {
            guard let family = snapshot[name] else { continue }
            out += "# HELP \(name) \(family.help)\n# TYPE \(name) \(family.type)\n"
            for labels in family.order {
                guard let series = family.series[labels] else { continue }
                switch series {
                case .counter(let counter):
                    out += "\(name)\(Self.braced(labels)) \(counter.value)\n"
                case .gauge(let gauge):
                    out += "\(name)\(Self.braced(labels)) \(Self.format(gauge.value))\n"
                case .function(let read):
                    out += "\(name)\(Self.braced(labels)) \(Self.format(read()))\n"
                case .histogram(let histogram):
                    out += histogram.render(name: name, labels: labels)
                }
            }
        }
        return out
    }

    // MARK: - Private

    private func register(
        name: String, help: String, type: String, labels: String, replace: Bool = false,
        make: () -> Series
    ) -> Series {
        let (series, isNewFamily) = families.withLock { families -> (Series, Bool) in
            var family = families[name] ?? Family(name: name, help: help, type: type, series: [:], order: [])
            let isNew = families[name] == nil
            precondition(family.type == type, "metric \(name) registered as \(family.type) and \(type)")
            if let existing = family.series[labels], !replace { return (existing, false) }
            let created = make()
            if family.series[labels] == nil { family.order.append(labels) }
            family.series[labels] = created
            families[name] = family
            return (created, isNew)
        }
        if isNewFamily { familyOrder.withLock { $0.append(name) } }
        return series
    }

    package static func renderLabels(_ labels: [(String, String)]) -> String {
        labels.map { key, value in "\(key)=\"\(escapeLabelValue(value))\"" }.joined(separator: ",")
    }

    package static func braced(_ labels: String) -> String { labels.isEmpty ? "" : "{\(labels)}" }

    private static func escapeLabelValue(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }

    package static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value == .infinity { return "+Inf" }
        if value == -.infinity { return "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}

extension MetricsRegistry.Series {
    fileprivate var counterValue: Counter? { if case .counter(let c) = self { c } else { nil } }
    fileprivate var gaugeValue: Gauge? { if case .gauge(let g) = self { g } else { nil } }
    fileprivate var histogramValue: Histogram? { if case .histogram(let h) = self { h } else { nil } }
}

/// A monotonically increasing count.
public final class Counter: Sendable {
    private let storage = Atomic<UInt64>(0)
    /// Creates a counter at zero.
    public init() {}
    /// Adds `amount`.
    public func increment(by amount: UInt64 = 1) { storage.wrappingAdd(amount, ordering: .relaxed) }
    /// The current value.
    public var value: UInt64 { storage.load(ordering: .relaxed) }
}

/// A value that goes up and down.
public final class Gauge: Sendable {
    private let bits = Atomic<UInt64>(0.0.bitPattern)
    /// Creates a gauge at zero.
    public init() {}
    /// Sets the value.
    public func set(_ value: Double) { bits.store(value.bitPattern, ordering: .relaxed) }
    /// Adds `delta` (may be negative).
    public func add(_ delta: Double) {
        var current = bits.load(ordering: .relaxed)
        while true {
            let next = (Double(bitPattern: current) + delta).bitPattern
            let (exchanged, original) = bits.compareExchange(
                expected: current, desired: next, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }
    /// The current value.
    public var value: Double { Double(bitPattern: bits.load(ordering: .relaxed)) }
}

/// A distribution of observations (seconds) in cumulative buckets.
public final class Histogram: Sendable {
    private struct State {
        package var counts: [UInt64]
        package var sum: Double = 0
        package var count: UInt64 = 0
    }
    /// Upper bounds of the buckets, ascending (the `+Inf` bucket is implicit).
    public let buckets: [Double]
    private let state: Mutex<State>

    /// Creates a histogram with the given bucket upper bounds.
    public init(buckets: [Double]) {
        self.buckets = buckets.sorted()
        self.state = Mutex(State(counts: Array(repeating: 0, count: buckets.count)))
    }

    /// Records one observation.
    public func observe(_ value: Double) {
        let index = buckets.firstIndex { value <= $0 }
        state.withLock { state in
            if let index { state.counts[index] += 1 }
            state.sum += value
            state.count += 1
        }
    }

    /// Records `value` observed `times` times (a run of equal observations, under one lock).
    public func observe(_ value: Double, times: UInt64) {
        guard times > 0 else { return }
        let index = buckets.firstIndex { value <= $0 }
        state.withLock { state in
            if let index { state.counts[index] += times }
            state.sum += value * Double(times)
            state.count += times
        }
    }

    /// Total observations so far.
    public var count: UInt64 { state.withLock { $0.count } }

    /// The raw state at one moment, for windowed statistics (the difference of two snapshots).
    public struct Snapshot: Sendable, Equatable {
        /// Observations per bucket (not cumulative), in the order of `buckets`; values above the last bound are
        /// only in `count`.
        public var bucketCounts: [UInt64]
        /// All observations.
        public var count: UInt64
        /// Their sum.
        public var sum: Double
    }

    /// The current counts, taken under the lock.
    public func snapshot() -> Snapshot {
        state.withLock { Snapshot(bucketCounts: $0.counts, count: $0.count, sum: $0.sum) }
    }

    /// The value below which `quantile` (0…1) of observations fall, estimated from the buckets.
    public func estimatedQuantile(_ quantile: Double) -> Double? {
        state.withLock { state in
            guard state.count > 0 else { return nil }
            let target = UInt64((Double(state.count) * quantile).rounded(.up))
            var cumulative: UInt64 = 0
            for (index, count) in state.counts.enumerated() {
                cumulative += count
                if cumulative >= target { return buckets[index] }
            }
            return .infinity
        }
    }

    fileprivate func render(name: String, labels: String) -> String {
        let snapshot = state.withLock { $0 }
        var out = ""
        var cumulative: UInt64 = 0
        let prefix = labels.isEmpty ? "" : labels + ","
        for (index, bound) in buckets.enumerated() {
            cumulative += snapshot.counts[index]
            out += "\(name)_bucket{\(prefix)le=\"\(MetricsRegistry.format(bound))\"} \(cumulative)\n"
        }
        out += "\(name)_bucket{\(prefix)le=\"+Inf\"} \(snapshot.count)\n"
        out += "\(name)_sum\(MetricsRegistry.braced(labels)) \(snapshot.sum)\n"
        out += "\(name)_count\(MetricsRegistry.braced(labels)) \(snapshot.count)\n"
        return out
    }
}
