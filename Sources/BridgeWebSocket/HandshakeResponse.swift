import BridgeSystem

/// The head of the server's answer to the upgrade request, and the checks that make it a valid WebSocket
/// acceptance (RFC 6455 §4.1, "the client MUST validate the server's response").
package struct HandshakeResponse: Sendable {
    /// The HTTP status code.
    package var status: Int
    /// The reason phrase.
    package var reasonPhrase: String
    /// Header fields in order, names as sent.
    package var headers: [(name: String, value: String)]

    /// The largest response head accepted; a server that sends more is not a WebSocket server.
    package static let maximumHeadLength = 16 << 10

    /// The first value of header `name` (case-insensitive).
    package func value(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The comma-separated tokens of every `name` header, lower-cased and trimmed.
    package func tokens(_ name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }
            .flatMap { $0.value.split(separator: ",") }
            .map { $0.trimmingCharacters(in: " \t").lowercased() }
    }

    /// Finds the end of the head in `bytes` (`\r\n\r\n`) and parses it.
    ///
    /// Returns the response and the head's length (the bytes after it already belong to the body or to
    /// WebSocket frames), or `nil` when more bytes are needed. Throws `.invalidHandshake` for text that is
    /// not an HTTP/1.x response or a head over 16 KiB.
    package static func parse(_ bytes: [UInt8]) throws -> (response: HandshakeResponse, headLength: Int)? {
        let end = headEnd(bytes)
        if (end ?? bytes.count) > maximumHeadLength {
            throw WebSocketError(.invalidHandshake, "the server's response head is larger than 16 KiB")
        }
        guard let end else {
            if bytes.count >= 5 && !bytes.starts(with: Array("HTTP/".utf8)) {
                throw WebSocketError(.invalidHandshake, "the server did not answer with HTTP")
            }
            return nil
        }
        // Split on bytes: as Swift Characters, "\r\n" is a single grapheme and would not split on "\n".
        var lines = bytes[..<end].split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
            String(decoding: line.last == 0x0D ? line.dropLast() : line, as: UTF8.self)
        }
        while lines.last?.isEmpty == true { lines.removeLast() }
        guard let statusLine = lines.first else {
            throw WebSocketError(.invalidHandshake, "empty response from the server")
        }
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        // RFC 9112 §4: status-code = 3DIGIT; only 1xx–5xx are defined, anything else is not an HTTP answer.
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Self.statusCode(parts[1]) else {
            throw WebSocketError(
                .invalidHandshake, "malformed status line \"\(PeerText.prefix(statusLine, maximumLength: 80))\"")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            if line.first == " " || line.first == "\t", let last = headers.popLast() {
                headers.append((last.name, last.value + " " + line.trimmingCharacters(in: " \t")))  // obs-fold
                continue
            }
            guard let colon = line.firstIndex(of: ":"), line[..<colon].isHTTPToken else {
                throw WebSocketError(
                    .invalidHandshake, "malformed header line \"\(PeerText.prefix(line, maximumLength: 80))\"")
            }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: " \t")))
        }
        let response = HandshakeResponse(
            status: status,
            reasonPhrase: parts.count > 2 ? String(parts[2]) : "",
            headers: headers
        )
        return (response, end + 4)
    }

    /// Checks a 101 answer against `request`. Throws `.invalidHandshake` naming the first rule broken.
    package func validateUpgrade(for request: HandshakeRequest) throws {
        func invalid(_ why: String) -> WebSocketError { WebSocketError(.invalidHandshake, "invalid upgrade: \(why)") }
        guard status == 101 else { throw invalid("status \(status)") }
        guard tokens("Upgrade").contains("websocket") else { throw invalid("no Upgrade: websocket header") }
        guard tokens("Connection").contains("upgrade") else { throw invalid("no Connection: Upgrade header") }
        guard let accept = value("Sec-WebSocket-Accept") else { throw invalid("no Sec-WebSocket-Accept header") }
        guard accept == request.expectedAccept else { throw invalid("Sec-WebSocket-Accept does not match the key") }
        if let extensions = value("Sec-WebSocket-Extensions"), !extensions.isEmpty {
            throw invalid("the server chose extensions (\(extensions)) the client did not offer")
        }
        if let chosen = value("Sec-WebSocket-Protocol"), !chosen.isEmpty,
            !request.requestedProtocols.contains(chosen)
        {
            throw invalid("the server chose subprotocol \(chosen), which the client did not offer")
        }
    }

    /// The status code of a status line's second field: exactly three ASCII digits, 100–599.
    private static func statusCode(_ text: Substring) -> Int? {
        let digits = Array(text.utf8)
        guard digits.count == 3, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        let code = digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        return (100...599).contains(code) ? code : nil
    }

    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 0x0D && bytes[index + 1] == 0x0A && bytes[index + 2] == 0x0D && bytes[index + 3] == 0x0A {
            return index
        }
        return nil
    }
}
