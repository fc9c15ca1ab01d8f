import BridgeSystem
import Foundation

/// An HTTP answer read by a test (the operations endpoint, a receiver's records, the emulator's control API).
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

/// Blocking HTTP/1.1 requests for tests over a plain socket (IPv4 and bracketed IPv6 hosts, which URLSession on
/// Linux refuses): `Connection: close`, read to the end, `Content-Length` or chunked bodies.
///
/// The test support's only HTTP client. Not URLSession: FoundationNetworking leaks a libcurl URL handle per request
/// (`CFURLSessionCurlHostIsEqual`) and a side table per socket, which LeakSanitizer could only be told to ignore by
/// naming all of libcurl, and that would hide the bridge's own curl leaks too (docs/RELIABILITY.md "Suppressions").
public enum HTTPFetch {
    /// `GET http://host:port/path`; throws when no complete HTTP answer arrived within `timeout`.
    public static func get(_ url: String, timeout: TimeInterval = 5) throws -> FetchedResponse {
        try request("GET", url, timeout: timeout)
    }

    /// `METHOD http://host:port/path` with `headers` and `body` (sent with its `Content-Length`); throws when no
    /// complete HTTP answer arrived within `timeout`. Any status is an answer.
    public static func request(
        _ method: String, _ url: String, headers: [String: String] = [:], body: Data? = nil,
        timeout: TimeInterval = 5
    ) throws -> FetchedResponse {
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
        var head = "\(method) \(path.isEmpty ? "/" : path) HTTP/1.1\r\nHost: \(authority)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        let request = Array(head.utf8) + Array("\r\n".utf8) + Array(body ?? Data())
        var sent = 0
        while sent < request.count {
            switch try request[sent...].withUnsafeBytes({ try socket.send($0) }) {
            case .transferred(let count): sent += count
            case .wouldBlock: _ = try socket.wait(for: .writable, until: deadline)
            case .endOfStream: throw EmulatorError(message: "\(method) \(url): connection closed while sending")
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
        return try parse(received, what: "\(method) \(url)")
    }

    private static func parse(_ bytes: [UInt8], what: String) throws -> FetchedResponse {
        guard let end = bytes.firstRange(of: [13, 10, 13, 10]) else {
            throw EmulatorError(message: "\(what): no complete answer (\(bytes.count) bytes)")
        }
        let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = head[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw EmulatorError(message: "\(what): bad status line \(head[0])")
        }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces
            )
        }
        var body = Array(bytes[end.upperBound...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" {
            body = try dechunk(body, what: what)
        } else if let length = headers["content-length"].flatMap(Int.init) {
            guard body.count >= length else { throw EmulatorError(message: "\(what): body cut short") }
            body = Array(body.prefix(length))
        }
        return FetchedResponse(status: status, headers: headers, body: Data(body))
    }

    /// A chunked body's data; throws when it ends before its last (empty) chunk.
    private static func dechunk(_ bytes: [UInt8], what: String) throws -> [UInt8] {
        var data: [UInt8] = []
        var rest = bytes[...]
        while let lineEnd = rest.firstRange(of: [13, 10]) {
            let sizeText = String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self)
            guard let size = Int(sizeText.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces), radix: 16) else {
                break
            }
            if size == 0 { return data }
            let start = lineEnd.upperBound
            guard rest.endIndex - start >= size + 2 else { break }
            data += rest[start..<(start + size)]
            rest = rest[(start + size + 2)...]
        }
        throw EmulatorError(message: "\(what): chunked body cut short")
    }
}
