import BridgeTestSupport
import Testing

@testable import BridgeWebSocket

/// Hostile answers to the upgrade request (issue 10, defect 2, and its siblings): nothing a server or proxy sends
/// traps the client or makes it read without bound.
@Suite struct HostileHandshakeTests {
    private func parsed(_ text: String) throws -> (HandshakeResponse, ArraySlice<UInt8>) {
        let bytes = Array(text.utf8)
        let (response, headLength) = try #require(try HandshakeResponse.parse(bytes))
        return (response, bytes[headLength...])
    }

    // MARK: - The parser

    @Test(arguments: [
        "-1", "-99999999999999999999", "99999999999999999999", "9223372036854775807", "+5", "5, 7", "0x10", "",
        "abc", " 5 5",
    ])
    func anyContentLengthGivesABoundedBodyPrefix(length: String) throws {
        let (response, raw) = try parsed("HTTP/1.1 502 Bad Gateway\r\nContent-Length: \(length)\r\n\r\nbad gateway")
        let body = response.bodyPrefix(raw)
        #expect(body.prefix.count <= HandshakeResponse.bodyPrefixLimit)
        #expect(Array("bad gateway".utf8).starts(with: body.prefix))
    }

    @Test func conflictingContentLengthsAreNotTrusted() throws {
        let (response, raw) = try parsed("HTTP/1.1 502 Bad\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nabcde")
        // Not framed by either value: the body runs to the end of the connection (as read so far).
        #expect(response.bodyPrefix(raw) == (Array("abcde".utf8), false))
        let (same, sameRaw) = try parsed("HTTP/1.1 502 Bad\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc")
        #expect(same.bodyPrefix(sameRaw) == (Array("abc".utf8), true))
    }

    @Test(arguments: [
        "7fffffffffffffff", "ffffffffffffffffffff", "-5", "+5", "", "zz", String(repeating: "f", count: 40000),
    ])
    func anyChunkSizeGivesABoundedBodyPrefix(size: String) throws {
        let (response, raw) = try parsed(
            "HTTP/1.1 503 Nope\r\nTransfer-Encoding: chunked\r\n\r\n\(size)\r\nsome data\r\n0\r\n\r\n"
        )
        let body = response.bodyPrefix(raw)
        #expect(body.prefix.count <= HandshakeResponse.bodyPrefixLimit)
    }

    /// A body that never completes (an endless chunk-size line, a huge Content-Length) stops being read after
    /// `maximumBodyRead` bytes: reading it further could only grow memory.
    @Test func anEndlessBodyIsCompleteAfterTheReadLimit() throws {
        let limit = HandshakeResponse.maximumBodyRead
        let (chunked, _) = try parsed("HTTP/1.1 503 Nope\r\nTransfer-Encoding: chunked\r\n\r\n")
        #expect(!chunked.bodyPrefix(ArraySlice(repeating: 0x66, count: limit - 1)).isComplete)
        #expect(chunked.bodyPrefix(ArraySlice(repeating: 0x66, count: limit)).isComplete)
        let (sized, _) = try parsed("HTTP/1.1 503 Nope\r\nContent-Length: 99999999999999999999\r\n\r\n")
        #expect(sized.bodyPrefix(ArraySlice(repeating: 0x41, count: limit)).isComplete)
    }

    @Test(arguments: [
        "HTTP/1.1 -99 Nope\r\n\r\n", "HTTP/1.1 +99 Nope\r\n\r\n", "HTTP/1.1 1x1 Nope\r\n\r\n", "HTTP/1.1 099 X\r\n\r\n",
        "HTTP/1.1 600 X\r\n\r\n", "HTTP/1.1 ١٠١ X\r\n\r\n", "HTTP/1.1\r\n\r\n", "HTTP/1.1 101\u{0} X\r\n\r\n",
        "HTTP/1.1 502 Bad\r\nno colon here\r\n\r\n", "HTTP/1.1 502 Bad\r\n: no name\r\n\r\n",
        "HTTP/1.1 502 Bad\r\nBad Name: x\r\n\r\n",
    ])
    func malformedHeadsAreInvalidHandshakes(text: String) {
        #expect {
            try HandshakeResponse.parse(Array(text.utf8))
        } throws: { error in
            (error as? WebSocketError)?.kind == .invalidHandshake
        }
    }

    @Test func anOverlongStatusLineOrHeaderIsRefusedAtTheHeadLimit() {
        let limit = HandshakeResponse.maximumHeadLength
        let statusLine = Array("HTTP/1.1 200 ".utf8) + [UInt8](repeating: 0x78, count: limit)
        #expect(throws: WebSocketError.self) { try HandshakeResponse.parse(statusLine) }
        let header = Array("HTTP/1.1 200 OK\r\nX: ".utf8) + [UInt8](repeating: 0x78, count: limit)
        #expect(throws: WebSocketError.self) { try HandshakeResponse.parse(header) }
        // Many short headers count against the same limit.
        let many = "HTTP/1.1 200 OK\r\n" + String(repeating: "X-A: 1\r\nX-A: 2\r\n", count: limit / 16) + "\r\n"
        #expect(throws: WebSocketError.self) { try HandshakeResponse.parse(Array(many.utf8)) }
    }

    // MARK: - Against a raw peer

    /// Connects to a raw peer of its own (not the run's shared one, which other suites wait on while it floods).
    private func connectError(_ head: String, query: String = "") async throws -> WebSocketError? {
        let server = try await PythonServer.start(script: "ws_peers/peer.py", arguments: ["raw"])
        return try await withServer(server) {
            let hex = hexString(Array(head.utf8))
            do {
                let connection = try await connect("ws://127.0.0.1:\(server.port)/answer?hex=\(hex)\(query)")
                connection.abort()
                return nil
            } catch {
                return error as? WebSocketError
            }
        }
    }

    /// The defect as found: a 502 with `Content-Length: -1` trapped the process.
    @Test func aBadGatewayWithANegativeContentLengthIsARejection() async throws {
        let error = try #require(
            try await connectError("HTTP/1.1 502 Bad Gateway\r\nContent-Length: -1\r\n\r\nupstream down")
        )
        #expect(error.kind == .handshakeRejected)
        #expect(error.status == 502)
        #expect(error.bodyText == "upstream down")
        #expect(error.isRetriable)
    }

    @Test(arguments: [
        "HTTP/1.1 502 Bad Gateway\r\nTransfer-Encoding: chunked\r\n\r\n",
        "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 99999999999999999999\r\n\r\n",
        "HTTP/1.1 502 Bad Gateway\r\n\r\n",
    ])
    func anEndlessRejectionBodyIsCutShort(head: String) async throws {
        let error = try #require(try await connectError(head, query: "&flood=256"))
        #expect(error.kind == .handshakeRejected)
        #expect(error.status == 502)
        #expect(error.body.count <= HandshakeResponse.bodyPrefixLimit)
    }

    @Test(arguments: ["HTTP/1.1 200 ", "HTTP/1.1 200 OK\r\nX-Long: ", "HTTP/1.1 200 OK\r\n"])
    func anEndlessHeadIsAnInvalidHandshake(head: String) async throws {
        let error = try #require(try await connectError(head, query: "&flood=256&flood_byte=x"))
        #expect(error.kind == .invalidHandshake)
    }
}
