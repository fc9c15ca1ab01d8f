/// Samples of a Prometheus text exposition (what the bridge's own `/metrics` serves), for `status`.
///
/// Only what the bridge writes is understood: `name{label="value",…} number` lines, comments skipped. A line that
/// does not parse is ignored rather than trusted: this reads another process's answer.
package struct MetricSamples: Sendable {
    /// One sample.
    package struct Sample: Sendable, Equatable {
        /// The metric name.
        package var name: String
        /// Its labels.
        package var labels: [String: String]
        /// Its value.
        package var value: Double
    }

    /// Every sample, in order.
    package private(set) var samples: [Sample] = []

    /// Parses `text`.
    package init(text: String) {
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            if let sample = Self.parse(line) { samples.append(sample) }
        }
    }

    /// The value of `name` with exactly these labels among its own (others may be present), when there is one.
    package func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { sample in
            sample.name == name && labels.allSatisfy { key, value in sample.labels[key] == value }
        }?.value
    }

    /// Every sample of `name`.
    package func all(_ name: String) -> [Sample] { samples.filter { $0.name == name } }

    private static func parse(_ line: Substring) -> Sample? {
        guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
            return nil
        }
        let series = line[..<space]
        guard let brace = series.firstIndex(of: "{") else { return Sample(name: String(series), labels: [:], value: value) }
        guard series.hasSuffix("}") else { return nil }
        var labels: [String: String] = [:]
        var rest = series[series.index(after: brace)..<series.index(before: series.endIndex)]
        while !rest.isEmpty {
            guard let equals = rest.firstIndex(of: "="), rest[rest.index(after: equals)...].first == "\"" else {
                return nil
            }
            let key = String(rest[..<equals])
            var index = rest.index(equals, offsetBy: 2)
            var text = ""
            var closed = false
            while index < rest.endIndex {
                let character = rest[index]
                index = rest.index(after: index)
                if character == "\\", index < rest.endIndex {
                    let escaped = rest[index]
                    index = rest.index(after: index)
                    text.append(escaped == "n" ? "\n" : escaped)
                } else if character == "\"" {
                    closed = true
                    break
                } else {
                    text.append(character)
                }
            }
            guard closed else { return nil }
            labels[key] = text
            rest = rest[index...]
            if rest.first == "," { rest = rest.dropFirst() }
        }
        return Sample(name: String(series[..<brace]), labels: labels, value: value)
    }
}
