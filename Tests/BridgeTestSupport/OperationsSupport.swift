import BridgeSystem
import Foundation

/// One sample of a parsed metric family.
public struct MetricSample: Sendable, Equatable {
    /// The sample name (`…_total`, `…_bucket`, `…_count`).
    public var name: String
    /// Its labels.
    public var labels: [String: String]
    /// Its value.
    public var value: Double
}

/// Prometheus text parsed by the official `prometheus_client` parser (Tests/tools/parse_metrics.py), so a test
/// fails on anything a real Prometheus could not read.
public struct ParsedMetrics: Sendable {
    /// Family name → type (`counter`, `gauge`, `histogram`).
    public var types: [String: String]
    /// Family name → samples.
    public var samples: [String: [MetricSample]]

    /// Parses `text`; throws with the parser's message when it does not parse.
    public init(parsing text: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestEnvironment.python)
        process.arguments = [TestEnvironment.tool("parse_metrics.py")]
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard ChildExit.wait(process) == 0,
            let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let families = root["families"] as? [String: [String: Any]]
        else { throw EmulatorError(message: "prometheus_client could not parse the metrics: \(errorText)") }
        var types: [String: String] = [:]
        var samples: [String: [MetricSample]] = [:]
        for (name, family) in families {
            types[name] = family["type"] as? String
            samples[name] = (family["samples"] as? [[String: Any]] ?? []).map { sample in
                MetricSample(
                    name: sample["name"] as? String ?? "",
                    labels: sample["labels"] as? [String: String] ?? [:],
                    value: (sample["value"] as? Double) ?? Double("\(sample["value"] ?? "nan")") ?? .nan
                )
            }
        }
        self.types = types
        self.samples = samples
    }

    /// The value of the sample `name` (family name for counters without `_total`, or the full sample name) whose
    /// labels include `labels`; nil when there is none.
    public func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        for family in samples.values {
            for sample in family where sample.name == name {
                if labels.allSatisfy({ sample.labels[$0.key] == $0.value }) { return sample.value }
            }
        }
        return nil
    }
}

extension BridgeProcess {
    /// The address of the operations endpoint from the `serving /metrics…` log line (`127.0.0.1:41234`), once it
    /// was logged.
    public var operationsAddress: String? {
        for line in stderr.split(separator: "\n") where line.contains("serving /metrics") {
            guard let range = line.range(of: "http.listen=") else { continue }
            let rest = line[range.upperBound...]
            return String(rest.prefix { !$0.isWhitespace && $0 != "," })
        }
        return nil
    }

    /// Waits for the operations endpoint's log line and returns `http://<address>`.
    public func operationsURL(timeout: TimeInterval = 10) -> String? {
        waitUntil(timeout: timeout) { $0.operationsAddress != nil }
        return operationsAddress.map { "http://\($0)" }
    }
}
