import BridgeSystem
import Foundation

/// An HTTP answer read by a test (the operations endpoint, a receiver's records).
public struct FetchedResponse: Sendable {
    /// The status code.
    public var status: Int
    /// Header values by lower-cased name.
    public var headers: [String: String]
    /// The body.
    public var body: Data
    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }
    /// The body parsed as a JSON object (empty when it is not one).
    public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
}

/// Blocking HTTP/1.1 GETs for tests over a plain socket (IPv4 and bracketed IPv6 hosts, which URLSession on
/// Linux refuses): `Connection: close`, read to the end, `Content-Length` bodies.
public enum HTTPFetch {
    /// `GET http://host:port/path`; throws when no complete HTTP answer arrived within `timeout`.
    public static func get(_ url: String, timeout: TimeInterval = 5) throws -> FetchedResponse {
        guard url.hasPrefix("http://") else { throw EmulatorError(message: "not an http URL: \(url)") }
        let rest = url.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(authority.count)
        var host = String(authority)
        var port = 80
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            let after = host[host.index(after: close)...]
            port = after.hasPrefix(":") ? Int(after.dropFirst()) ?? 80 : 80
            host = String(host[host.index(after: host.startIndex)..<close])
        } else if let colon = host.lastIndex(of: ":") {
            port = Int(host[host.index(after: colon)...]) ?? 80
            host = String(host[..<colon])
        }
        guard let address = SocketAddress(ipAddress: host == "localhost" ? "127.0.0.1" : host, port: port) else {
            throw EmulatorError(message: "not a numeric address: \(url)")
        }
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        let socket = try Socket.connect(to: address, deadline: deadline)
        let request = Array(
            "GET \(path.isEmpty ? "/" : path) HTTP/1.1\r\nHost: \(authority)\r\nConnection: close\r\n\r\n".utf8
        )
        var sent = 0
        while sent < request.count {
            switch try request[sent...].withUnsafeBytes({ try socket.send($0) }) {
            case .transferred(let count): sent += count
            case .wouldBlock: _ = try socket.wait(for: .writable, until: deadline)
            case .endOfStream: throw EmulatorError(message: "GET \(url): connection closed while sending")
            }
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        reading: while ContinuousClock.now < deadline {
            guard try socket.wait(for: .readable, until: deadline) else { break }
            switch try buffer.withUnsafeMutableBytes({ try socket.receive(into: $0) }) {
            case .transferred(let count): received += buffer[..<count]
            case .wouldBlock: continue
            case .endOfStream: break reading
            }
        }
        return try parse(received, url: url)
    }

    private static func parse(_ bytes: [UInt8], url: String) throws -> FetchedResponse {
        guard let end = bytes.firstRange(of: [13, 10, 13, 10]) else {
            throw EmulatorError(message: "GET \(url): no complete answer (\(bytes.count) bytes)")
        }
        let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = head[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw EmulatorError(message: "GET \(url): bad status line \(head[0])")
        }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces
            )
        }
        var body = Array(bytes[end.upperBound...])
        if let length = headers["content-length"].flatMap(Int.init) {
            guard body.count >= length else { throw EmulatorError(message: "GET \(url): body cut short") }
            body = Array(body.prefix(length))
        }
        return FetchedResponse(status: status, headers: headers, body: Data(body))
    }
}

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
