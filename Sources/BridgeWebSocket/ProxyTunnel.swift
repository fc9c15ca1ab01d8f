import BridgeTLS

/// Opening a tunnel through an HTTP proxy (RFC 9110 §9.3.6), without I/O: the `CONNECT host:port` request, then the
/// proxy's answer fed in as it arrives, until a step says how it ended.
///
/// The answer is a peer's text and is read with bounds: at most `maxAnswerBytes` for the whole head (an endless header
/// or one huge line ends there), at most `maxLines` lines; the memory kept is the current line only. A 2xx opens the
/// tunnel; interim 1xx answers are skipped; any other status refuses it. Nothing may follow a 2xx head: the origin has
/// not been spoken to yet, so bytes there are the proxy's, and feeding them to TLS or the upgrade would trust them.
struct ProxyTunnel {
    /// What the answer so far means.
    enum Step: Equatable {
        /// The head is not complete: read more.
        case needMore
        /// The proxy answered 2xx and nothing after it: the connection now reaches the origin.
        case established
        /// The proxy answered `status` (not 1xx or 2xx) with `reason` (at most 200 bytes, as the proxy wrote it).
        case refused(status: Int, reason: String)
        /// The answer is not an HTTP answer to CONNECT, or breaks a bound; the text says how.
        case invalid(String)
    }

    /// The most bytes of answer head read (status line, headers, blank line, interim answers included).
    static let maxAnswerBytes = 16 * 1024
    /// The most lines in the answer head.
    static let maxLines = 100

    /// The request to write first.
    let request: [UInt8]

    private enum Phase { case statusLine, headers, finished }
    private var phase = Phase.statusLine
    private var line: [UInt8] = []
    private var bytesRead = 0
    private var lines = 0
    private var status = 0
    private var reason = ""

    /// The tunnel to `host` (a name or IP literal, brackets added for IPv6) and `port`; `basicCredentials`
    /// (`user:password`, base64-encoded here) adds `Proxy-Authorization: Basic`.
    init(host: String, port: Int, basicCredentials: String?) {
        let authority = (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
        var text = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
        if let basicCredentials {
            text += "Proxy-Authorization: Basic \(Crypto.base64Encode(Array(basicCredentials.utf8)))\r\n"
        }
        request = Array((text + "\r\n").utf8)
    }

    /// Feeds the next bytes of the answer.
    mutating func received(_ bytes: some Collection<UInt8>) -> Step {
        guard phase != .finished else { return .invalid("answer read after it ended") }
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            index = bytes.index(after: index)
            bytesRead += 1
            if bytesRead > Self.maxAnswerBytes {
                return finish(.invalid("the answer's head is longer than \(Self.maxAnswerBytes) bytes"))
            }
            guard byte == UInt8(ascii: "\n") else {
                line.append(byte)
                continue
            }
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            lines += 1
            if lines > Self.maxLines {
                return finish(.invalid("the answer's head has more than \(Self.maxLines) lines"))
            }
            if let step = endOfLine(followedBy: bytes.distance(from: index, to: bytes.endIndex)) { return step }
        }
        return .needMore
    }

    /// Handles the complete `line`; `remaining` bytes follow it in the current chunk. Nil: go on reading.
    private mutating func endOfLine(followedBy remaining: Int) -> Step? {
        defer { line.removeAll(keepingCapacity: true) }
        switch phase {
        case .statusLine:
            guard let (code, phrase) = Self.statusLine(line) else {
                return finish(.invalid("the answer to CONNECT is not an HTTP status line"))
            }
            status = code
            reason = phrase
            phase = .headers
            return nil
        case .headers:
            guard line.isEmpty else { return nil }  // a header: none of them matters to a tunnel
            switch status {
            case 100..<200:
                phase = .statusLine
                return nil
            case 200..<300:
                guard remaining == 0 else {
                    let why = "the proxy sent \(remaining) bytes after its answer, before the origin spoke"
                    return finish(.invalid(why))
                }
                return finish(.established)
            default:
                return finish(.refused(status: status, reason: reason))
            }
        case .finished:
            return finish(.invalid("answer read after it ended"))
        }
    }

    private mutating func finish(_ step: Step) -> Step {
        phase = .finished
        line = []
        return step
    }

    /// `HTTP/1.x SSS reason`: the status (100–599) and the reason phrase's first 200 bytes.
    private static func statusLine(_ line: [UInt8]) -> (Int, String)? {
        let prefix = Array("HTTP/1.".utf8)
        guard line.count >= 12, line.starts(with: prefix), line[7] == UInt8(ascii: "0") || line[7] == UInt8(ascii: "1"),
            line[8] == UInt8(ascii: " ")
        else { return nil }
        let digits = line[9..<12]
        guard digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        let status = digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        guard (100...599).contains(status), line.count == 12 || line[12] == UInt8(ascii: " ") else { return nil }
        let phrase = line.count > 13 ? line[13...].prefix(200) : []
        return (status, String(decoding: phrase, as: UTF8.self))
    }
}
