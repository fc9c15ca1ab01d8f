import BridgeSystem

/// How fast event times are formatted (every event line carries two).
enum TimestampBenchmark {
    @Sendable static func run(_ arguments: [String]) async throws {
        let count = 1_000_000
        var buffer: [UInt8] = []
        buffer.reserveCapacity(32)
        let base = Timestamp.now().microsecondsSinceEpoch
        let seconds = measureSeconds {
            for index in 0..<count {
                buffer.removeAll(keepingCapacity: true)
                Timestamp(microsecondsSinceEpoch: base + Int64(index) * 1_000).appendRFC3339(to: &buffer)
            }
        }
        blackHole(buffer)
        BenchmarkResult(benchmark: "timestamp", metric: "formats/s", value: Double(count) / seconds, unit: "1/s")
            .emit()
    }
}
