import Testing

@testable import BridgeWebSocket

private func response(_ text: String) -> [UInt8] { Array(text.utf8) }

private let sampleRequest = try! HandshakeRequest(
    url: WebSocketURL("ws://example.com/chat"),
    headers: [],
    nonce: Array("the sample nonce".utf8)
)

private let goodHead =
    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
private let goodAnswer = goodHead + "\r\n"

@Suite struct HandshakeRequestTests {
    @Test func keyAndAcceptFollowTheRFCExample() {
        #expect(sampleRequest.key == "dGhlIHNhbXBsZSBub25jZQ==")
        #expect(sampleRequest.expectedAccept == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func buildsTheUpgradeRequest() throws {
        let url = try WebSocketURL("wss://example.com:8443/cms/websocket?access_token=abc")
        let request = try HandshakeRequest(
            url: url,
            headers: [("User-Agent", "directus-bridge/1"), ("Sec-WebSocket-Protocol", "a, b")],
            nonce: Array("the sample nonce".utf8)
        )
        #expect(
            String(decoding: request.bytes, as: UTF8.self)
                == "GET /cms/websocket?access_token=abc HTTP/1.1\r\nHost: example.com:8443\r\nUpgrade: websocket\r\n"
                + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                + "User-Agent: directus-bridge/1\r\nSec-WebSocket-Protocol: a, b\r\n\r\n"
        )
        #expect(request.requestedProtocols == ["a", "b"])
    }

    @Test func randomKeysDiffer() throws {
        let url = try WebSocketURL("ws://h/")
        let first = try HandshakeRequest(url: url, headers: [])
        let second = try HandshakeRequest(url: url, headers: [])
        #expect(first.key != second.key)
        #expect(first.key.utf8.count == 24)
    }

    @Test(arguments: [
        ("Bad Name", "x"), ("X-Inject", "a\r\nEvil: 1"), ("Host", "other"), ("sec-websocket-key", "k"),
        ("Connection", "close"), ("", "x"),
    ])
    func refusesHeadersThatCouldBreakTheRequest(name: String, value: String) throws {
        let url = try WebSocketURL("ws://h/")
        #expect {
            try HandshakeRequest(url: url, headers: [(name, value)])
        } throws: { error in
            (error as? WebSocketError)?.kind == .invalidRequest
        }
    }
}

@Suite struct HandshakeResponseTests {
    @Test func parsesAndAcceptsAValidUpgradeAtEverySplit() throws {
        let bytes = response(goodAnswer) + [0x81, 0x00]  // an early frame right behind the head
        for cut in 0..<(bytes.count - 2) {
            #expect(try HandshakeResponse.parse(Array(bytes[..<cut])) == nil, "cut at \(cut)")
        }
        let (parsed, headLength) = try #require(try HandshakeResponse.parse(bytes))
        #expect(headLength == bytes.count - 2)
        #expect(parsed.status == 101)
        try parsed.validateUpgrade(for: sampleRequest)
    }

    @Test func headerNamesAndTokensAreCaseInsensitive() throws {
        let text =
            "HTTP/1.1 101 OK\r\nupgrade: WebSocket\r\nconnection: keep-alive, UPGRADE\r\n"
            + "sec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"
        let (parsed, _) = try #require(try HandshakeResponse.parse(response(text)))
        try parsed.validateUpgrade(for: sampleRequest)
    }

    @Test(arguments: [
        (
            "HTTP/1.1 101 OK\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
            "Upgrade"
        ),
        (
            "HTTP/1.1 101 OK\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
            "Connection"
        ),
        ("HTTP/1.1 101 OK\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n", "no Sec-WebSocket-Accept"),
        (
            "HTTP/1.1 101 OK\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: AAAA\r\n\r\n",
            "does not match"
        ),
        (goodHead + "Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n", "extensions"),
        (goodHead + "Sec-WebSocket-Protocol: chat\r\n\r\n", "subprotocol"),
    ])
    func rejectsBrokenUpgrades(text: String, reason: String) throws {
        let (parsed, _) = try #require(try HandshakeResponse.parse(response(text)))
        #expect {
            try parsed.validateUpgrade(for: sampleRequest)
        } throws: { error in
            let error = error as? WebSocketError
            return error?.kind == .invalidHandshake && error?.message.contains(reason) == true
        }
    }

    @Test func rejectsTextThatIsNotHTTP() {
        #expect(throws: WebSocketError.self) { try HandshakeResponse.parse(response("SSH-2.0-OpenSSH\r\n")) }
        #expect(throws: WebSocketError.self) { try HandshakeResponse.parse(response("HTTP/1.1 abc\r\n\r\n")) }
        #expect(throws: WebSocketError.self) {
            try HandshakeResponse.parse(response("HTTP/1.1 200 OK\r\nX: " + String(repeating: "a", count: 17000)))
        }
    }

    @Test func bodyPrefixesOfRejections() throws {
        let (withLength, lengthHead) = try #require(
            try HandshakeResponse.parse(response("HTTP/1.1 401 Unauthorized\r\nContent-Length: 5\r\n\r\nnope!"))
        )
        #expect(withLength.status == 401)
        let raw = response("HTTP/1.1 401 Unauthorized\r\nContent-Length: 5\r\n\r\nnope!")
        #expect(withLength.bodyPrefix(raw[lengthHead...]) == (Array("nope!".utf8), true))
        #expect(withLength.bodyPrefix(raw[lengthHead..<(lengthHead + 2)]).isComplete == false)

        let chunkedText =
            "HTTP/1.1 503 Unavailable\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
        let chunkedRaw = response(chunkedText)
        let (chunked, chunkedHead) = try #require(try HandshakeResponse.parse(chunkedRaw))
        let prefix = chunked.bodyPrefix(chunkedRaw[chunkedHead...])
        #expect(String(decoding: prefix.prefix, as: UTF8.self) == "hello world")
        #expect(prefix.isComplete)

        let bigRaw = response("HTTP/1.1 404 Not Found\r\n\r\n" + String(repeating: "x", count: 600))
        let (unframed, unframedHead) = try #require(try HandshakeResponse.parse(bigRaw))
        #expect(unframed.bodyPrefix(bigRaw[unframedHead...]).prefix.count == 512)
        #expect(unframed.bodyPrefix(bigRaw[unframedHead...]).isComplete)
    }
}
