import BridgeWebSocket

/// The server's answer to the upgrade request, read as `WebSocketConnection` reads it: `HandshakeResponse.parse`
/// after every read until the head is complete, then `bodyPrefix` (a rejection's body) or `validateUpgrade`.
///
/// Input: byte 0 seeds the read sizes (1 … 4096 bytes, as the connection's 4 KiB reads); the rest is what the
/// server sent.
///
/// Invariants:
/// - Reading more never changes a parsed head: the response and head length found after some read are the ones
///   found in the whole input, and a refusal stays a refusal.
/// - An accepted head is at most `maximumHeadLength` bytes; its status is 100–599.
/// - A rejection's body prefix is at most `bodyPrefixLimit` bytes and, once complete, more bytes leave it unchanged.
/// - `validateUpgrade` accepts only a 101 whose `Sec-WebSocket-Accept` is the one the request's key asks for.
enum HandshakeResponseTarget {
    static let target = FuzzTarget(
        name: "handshake-response",
        summary: "upgrade response parser: incremental, bounded head, body prefix, upgrade validation",
        run: run
    )

    /// The request every input answers (fixed key, so seeds can carry the matching accept value).
    static let request: HandshakeRequest = {
        do {
            return try HandshakeRequest(
                url: try WebSocketURL("ws://127.0.0.1:8055/websocket"),
                headers: [("Sec-WebSocket-Protocol", "chat")],
                nonce: Array(repeating: 0, count: 16)
            )
        } catch {
            fatalError("the fixed upgrade request is valid: \(error)")
        }
    }()

    /// A parse result reduced to what can be compared.
    struct Head: Equatable {
        var status: Int
        var reasonPhrase: String
        var headers: [String]
        var length: Int
    }

    static func run(_ bytes: UnsafeRawBufferPointer) {
        var input = FuzzInput(bytes)
        var random = SplitMix64(seed: UInt64(input.byte()))
        let all = Array(input.rest)
        let whole = parse(all)

        var received: [UInt8] = []
        var start = 0
        while start < all.count {
            let size = min(random.next(in: 1...4096), all.count - start)
            received += all[start..<(start + size)]
            start += size
            guard case .some(let outcome) = parse(received) else { continue }
            switch outcome {
            case .failure:
                require(whole.map { if case .failure = $0 { true } else { false } } == true, "a refusal was undone")
            case .success(let (response, head)):
                require(whole.map { if case .success(let (_, later)) = $0 { later == head } else { false } } == true,
                    "the head changed after more bytes: \(head) then \(String(describing: whole))")
                check(response, head: head, body: all[head.length...], reads: &random)
            }
            return
        }
    }

    /// `HandshakeResponse.parse`, its result made comparable; nil when more bytes are needed.
    static func parse(_ bytes: [UInt8]) -> Result<(HandshakeResponse, Head), any Error>? {
        do {
            guard let (response, length) = try HandshakeResponse.parse(bytes) else { return nil }
            let head = Head(
                status: response.status,
                reasonPhrase: response.reasonPhrase,
                headers: response.headers.map { "\($0.name): \($0.value)" },
                length: length
            )
            return .success((response, head))
        } catch {
            return .failure(error)
        }
    }

    /// The checks on a parsed head and what follows it.
    static func check(
        _ response: HandshakeResponse,
        head: Head,
        body: ArraySlice<UInt8>,
        reads random: inout SplitMix64
    ) {
        require(head.length <= HandshakeResponse.maximumHeadLength, "a head of \(head.length) bytes was accepted")
        require((100...599).contains(response.status), "status \(response.status) is not 100–599")
        if response.status != 101 {
            var seen = body.startIndex
            var complete: [UInt8]?
            while true {
                let prefix = response.bodyPrefix(body[..<seen])
                require(prefix.prefix.count <= HandshakeResponse.bodyPrefixLimit, "a body prefix over the limit")
                if let complete {
                    require(prefix.prefix == complete, "a complete body prefix changed with more bytes")
                } else if prefix.isComplete {
                    complete = prefix.prefix
                }
                if seen == body.endIndex { break }
                seen = min(body.endIndex, seen + random.next(in: 1...4096))
            }
        }
        do {
            try response.validateUpgrade(for: request)
            require(response.status == 101, "an upgrade accepted with status \(response.status)")
            require(response.value("Sec-WebSocket-Accept") == request.expectedAccept, "a wrong accept value passed")
        } catch {}
    }
}
