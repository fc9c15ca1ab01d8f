#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import BridgeSystem

/// Writes progress to stderr (stdout carries the JSON result lines).
enum FileHandleStderr {
    static func write(_ text: String) {
        FileDescriptorWriter.writeAll(fd: 2, bytes: Array(text.utf8))
    }
}

/// One result line on stdout, as JSON, for Benchmarks/run.
struct BenchmarkResult {
    var benchmark: String
    var metric: String
    var value: Double
    var unit: String
    var peer: String? = nil
    var peerValue: Double? = nil

    func emit() {
        var bytes: [UInt8] = Array("{\"benchmark\":".utf8)
        appendJSONString(benchmark, to: &bytes)
        bytes += Array(",\"metric\":".utf8)
        appendJSONString(metric, to: &bytes)
        bytes += Array(",\"value\":\(format(value)),\"unit\":".utf8)
        appendJSONString(unit, to: &bytes)
        if let peer, let peerValue {
            bytes += Array(",\"peer\":".utf8)
            appendJSONString(peer, to: &bytes)
            bytes += Array(",\"peer_value\":\(format(peerValue))".utf8)
        }
        bytes += Array("}\n".utf8)
        FileDescriptorWriter.writeAll(fd: 1, bytes: bytes)
    }

    private func format(_ value: Double) -> String {
        value.isFinite ? String(Double(Int64(value * 1000)) / 1000) : "null"
    }
}

/// Measures the wall time of `body` in seconds.
func measureSeconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// Keeps the optimiser from deleting work whose result is otherwise unused.
@inline(never) func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }
