import BridgeSystem
import BridgeTLS

/// The client's opening handshake (RFC 6455 §4.1): the HTTP/1.1 upgrade request and the accept value the
/// server must answer with.
package struct HandshakeRequest: Sendable {
    /// The `Sec-WebSocket-Key`: base64 of 16 random bytes.
    package let key: String
    /// The `Sec-WebSocket-Accept` value a genuine WebSocket server computes from `key`.
    package let expectedAccept: String
    /// Subprotocols the caller asked for through a `Sec-WebSocket-Protocol` header (the server may pick one).
    package let requestedProtocols: [String]
    /// The request, ready to write.
    package let bytes: [UInt8]

    /// Headers the client sets itself; passing them as extra headers is an error rather than a silent override.
    private static let reservedHeaders: Set<String> = [
        "host", "upgrade", "connection", "sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions",
        "content-length", "transfer-encoding",
    ]

    /// The GUID of RFC 6455 §1.3 that is appended to the key before hashing.
    private static let acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// Builds the request for `url` with extra `headers`. `nonce` (16 bytes) is random unless a test fixes it.
    /// Throws `WebSocketError` (`.invalidRequest`) for header names or values that could split the request.
    package init(url: WebSocketURL, headers: [(String, String)], nonce: [UInt8] = Crypto.randomBytes(count: 16))
        throws
    {
        precondition(nonce.count == 16, "the Sec-WebSocket-Key nonce is 16 bytes")
        key = Crypto.base64Encode(nonce)
        expectedAccept = Self.acceptValue(forKey: key)
        var text = "GET \(url.requestTarget) HTTP/1.1\r\n"
        text += "Host: \(url.hostHeader)\r\n"
        text += "Upgrade: websocket\r\n"
        text += "Connection: Upgrade\r\n"
        text += "Sec-WebSocket-Key: \(key)\r\n"
        text += "Sec-WebSocket-Version: 13\r\n"
        var protocols: [String] = []
        for (name, value) in headers {
            guard name.isHTTPToken else {
                throw WebSocketError(.invalidRequest, "header name \"\(name)\" is not a valid HTTP token")
            }
            guard !OneLine.isBroken(value) else {
                throw WebSocketError(.invalidRequest, "the value of header \(name) contains a line break")
            }
            guard !Self.reservedHeaders.contains(name.lowercased()) else {
                throw WebSocketError(.invalidRequest, "header \(name) is set by the WebSocket client itself")
            }
            if name.lowercased() == "sec-websocket-protocol" {
                protocols += value.split(separator: ",").map { $0.trimmingCharacters(in: " \t") }
            }
            text += "\(name): \(value)\r\n"
        }
        text += "\r\n"
        requestedProtocols = protocols
        bytes = Array(text.utf8)
    }

    /// `base64(SHA-1(key + GUID))` (RFC 6455 §4.2.2 step 5.4).
    package static func acceptValue(forKey key: String) -> String {
        Crypto.base64Encode(Crypto.sha1(Array((key + acceptGUID).utf8)))
    }
}

extension StringProtocol {
    /// Whether the text is an RFC 9110 `token` (a valid header field name): visible ASCII without separators.
    var isHTTPToken: Bool {
        !isEmpty
            && utf8.allSatisfy { byte in
                byte > 0x20 && byte < 0x7F && !"\"(),/:;<=>?@[\\]{}".utf8.contains(byte)
            }
    }

    /// The text without leading and trailing characters from `set` (Foundation-free).
    func trimmingCharacters(in set: String) -> String {
        let characters = Set(set)
        guard let start = firstIndex(where: { !characters.contains($0) }) else { return "" }
        let end = lastIndex(where: { !characters.contains($0) })!
        return String(self[start...end])
    }
}
