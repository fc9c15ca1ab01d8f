import BridgeSystem
import BridgeTestSupport
import Testing

@testable import BridgeWebSocket

/// Conformance against a hand-written peer that breaks the protocol on purpose (Autobahn sections 2–7):
/// fragmentation with pings, pings and pongs, reserved bits and opcodes, masked server frames, invalid UTF-8,
/// oversize messages, close codes, and abrupt drops. The peer reports what close frame the client sent.
@Suite struct RawPeerConformanceTests {
    /// Connects to a scenario of the raw peer; `query` without the `id`.
    private func open(_ path: String, _ query: String = "", id: String, options: WebSocketOptions = WebSocketOptions())
        async throws -> (WebSocketConnection, PythonServer)
    {
        let server = try await Peers.raw()
        let separator = query.isEmpty ? "" : "&"
        let connection = try await connect(
            "ws://127.0.0.1:\(server.port)\(path)?\(query)\(separator)id=\(id)",
            options: options
        )
        return (connection, server)
    }

    /// Sends `bytes` as raw server frames and expects the client to close with `code`.
    private func expectClientCloses(_ bytes: [UInt8], with code: UInt16, options: WebSocketOptions = WebSocketOptions())
        async throws -> WebSocketError?
    {
        let id = makeID()
        let (connection, server) = try await open("/frames", "hex=\(hexString(bytes))", id: id, options: options)
        let error = await connection.nextError()
        #expect(error?.closeCode == code)
        #expect(await server.result(id) == "close \(code) \(error?.closeReason ?? "")")
        return error
    }

    // MARK: - Fragmentation (Autobahn 5) and pings (2)

    @Test(arguments: [1, 2, 10, 1000])
    func reassemblesFragmentsAndAnswersPingsBetweenThem(count: Int) async throws {
        let id = makeID()
        let (connection, server) = try await open("/fragments", "count=\(count)&size=\(max(count, 3000))", id: id)
        let message = try await connection.next()
        #expect(message.bytes.count == max(count, 3000))
        #expect(message.text != nil)
        #expect(try await connection.next().text == "pongs-ok \(count - 1)")
        #expect(await connection.close().code == 1000)
        #expect(await server.result(id) == "close 1000 ")
    }

    @Test func reassemblesAOneMebibyteMessageFromSixtyFourFragmentsWithPings() async throws {
        let (connection, _) = try await open("/fragments", "count=64&size=1048576", id: makeID())
        let message = try await connection.next()
        #expect(message.bytes.count == 1 << 20)
        #expect(message.bytes.prefix(3) == [35, 42, 49])  // the peer's byte pattern: (i * 7 + 3) % 94 + 32
        #expect(try await connection.next().text == "pongs-ok 63")
        await connection.close()
    }

    @Test func reassemblesBinaryFragments() async throws {
        let (connection, _) = try await open("/fragments", "count=5&size=100&binary=1&pings=0", id: makeID())
        guard case .binary(let bytes) = try await connection.next() else {
            Issue.record("expected binary")
            return
        }
        #expect(bytes.count == 100)
        await connection.close()
    }

    @Test func validatesUTF8SplitIntoOneByteFragments() async throws {
        let text = "κόσμε-Hello-µ@ßöäüàá"
        let (connection, _) = try await open(
            "/fragments",
            "text=\(text.addingPercentEncodingForQuery)&count=\(text.utf8.count)&pings=0",
            id: makeID()
        )
        #expect(try await connection.next().text == text)
        await connection.close()
    }

    @Test(arguments: [(0, 1), (125, 1), (10, 10)])
    func answersPingsWithTheSamePayload(size: Int, count: Int) async throws {
        let (connection, _) = try await open("/ping", "size=\(size)&count=\(count)", id: makeID())
        #expect(try await connection.next().text == "pong-ok")
        await connection.close()
    }

    @Test func ignoresUnsolicitedPongs() async throws {
        let frames = serverFrame(0xA, Array("unsolicited".utf8)) + serverFrame(0x1, Array("after".utf8))
        let (connection, _) = try await open("/frames", "hex=\(hexString(frames))", id: makeID())
        #expect(try await connection.next().text == "after")
        await connection.close()
    }

    // MARK: - Protocol violations (Autobahn 2.5, 3, 4, 5.x)

    @Test(arguments: [
        serverFrame(0x9, [UInt8](repeating: 1, count: 126)),  // control frame over 125 bytes
        serverFrame(0x9, [1], fin: false),  // fragmented control frame
        serverFrame(0x1, Array("x".utf8), rsv: 4), serverFrame(0x1, Array("x".utf8), rsv: 2),
        serverFrame(0x1, Array("x".utf8), rsv: 1), serverFrame(0x9, [], rsv: 7),
        serverFrame(0x3, []), serverFrame(0x4, [1]), serverFrame(0x5, []), serverFrame(0x6, []), serverFrame(0x7, []),
        serverFrame(0xB, []), serverFrame(0xC, []), serverFrame(0xD, []), serverFrame(0xE, []), serverFrame(0xF, []),
        serverFrame(0x1, Array("masked".utf8), mask: [1, 2, 3, 4]),
        serverFrame(0x0, Array("orphan".utf8)),  // continuation without a start
        serverFrame(0x1, Array("a".utf8), fin: false) + serverFrame(0x1, Array("b".utf8)),  // nested start
    ])
    func closesWith1002OnProtocolViolations(frames: [UInt8]) async throws {
        let error = try await expectClientCloses(frames, with: 1002)
        #expect(error?.kind == .protocolViolation)
    }

    @Test func deliversGoodMessagesBeforeAViolation() async throws {
        let frames = serverFrame(0x1, Array("good".utf8)) + serverFrame(0x1, Array("x".utf8), rsv: 4)
        let id = makeID()
        let (connection, server) = try await open("/frames", "hex=\(hexString(frames))", id: id)
        #expect(try await connection.next().text == "good")
        #expect(await connection.nextError()?.closeCode == 1002)
        #expect(await server.result(id)?.hasPrefix("close 1002") == true)
    }

    // MARK: - UTF-8 (Autobahn 6)

    @Test(arguments: [
        serverFrame(0x1, [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xED, 0xA0, 0x80, 0x65]),  // surrogate
        serverFrame(0x1, [0x61, 0xC0, 0xAF]),  // overlong
        serverFrame(0x1, [0xCE], fin: false) + serverFrame(0x0, [0xBA, 0xFF]),  // bad byte in the second fragment
        serverFrame(0x1, [0x61, 0xED], fin: false) + serverFrame(0x0, [0xA0, 0x80]),  // surrogate split in two
        serverFrame(0x1, [0x61, 0xE2, 0x82]),  // ends inside a character
    ])
    func closesWith1007OnInvalidUTF8(frames: [UInt8]) async throws {
        let error = try await expectClientCloses(frames, with: 1007)
        #expect(error?.kind == .protocolViolation)
    }

    /// The same frames through the receive that leaves the UTF-8 of a whole text frame to its caller (the socket
    /// reader's JSON decoding): the caller's refusal, or the connection's own check of fragments, closes with 1007.
    @Test(arguments: [
        serverFrame(0x1, [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xED, 0xA0, 0x80, 0x65]),
        serverFrame(0x1, [0x61, 0xC0, 0xAF]),
        serverFrame(0x1, [0xCE], fin: false) + serverFrame(0x0, [0xBA, 0xFF]),
        serverFrame(0x1, [0x61, 0xE2, 0x82]),
    ])
    func closesWith1007WhenTheCallerThatChecksTextRefusesIt(frames: [UInt8]) async throws {
        let id = makeID()
        let (connection, server) = try await open("/frames", "hex=\(hexString(frames))", id: id)
        let error = try await blocking { () -> WebSocketError? in
            let deadline = ContinuousClock.now + .seconds(5) * TestEnvironment.patience
            while ContinuousClock.now < deadline {
                do {
                    _ = try connection.receive(timeout: .milliseconds(200)) {
                        (message) throws(WebSocketProtocolError) in
                        guard !message.isText || UTF8Validator.isValid(message.bytes) else { throw .invalidUTF8 }
                        return true
                    }
                } catch {
                    return error as? WebSocketError
                }
            }
            return nil
        }
        #expect(error?.closeCode == 1007 && error?.kind == .protocolViolation)
        #expect(await server.result(id) == "close 1007 invalid UTF-8")
    }

    @Test func closesWith1009OnOversizeMessages() async throws {
        let options = WebSocketOptions(maxMessageSize: 1000)
        let single = try await expectClientCloses(
            serverFrame(0x2, [UInt8](repeating: 0, count: 1001)),
            with: 1009,
            options: options
        )
        #expect(single?.kind == .messageTooBig)
        let fragmented =
            serverFrame(0x2, [UInt8](repeating: 0, count: 600), fin: false)
            + serverFrame(0x0, [UInt8](repeating: 0, count: 600))
        #expect(try await expectClientCloses(fragmented, with: 1009, options: options)?.kind == .messageTooBig)
    }

    // MARK: - Close (Autobahn 7)

    @Test(arguments: [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999] as [UInt16])
    func echoesValidCloseCodes(code: UInt16) async throws {
        let id = makeID()
        let (connection, server) = try await open("/close", "code=\(code)&reason=r\(code)", id: id)
        let error = try #require(await connection.nextError())
        #expect(error.kind == .closed)
        #expect(error.closeCode == code)
        #expect(error.closeReason == "r\(code)")
        #expect(await server.result(id) == "close \(code) ")
    }

    @Test(arguments: [0, 999, 1004, 1005, 1006, 1012 + 3, 1016, 1100, 2000, 2999, 5000, 65535] as [UInt16])
    func answersInvalidCloseCodesWith1002(code: UInt16) async throws {
        let id = makeID()
        let (connection, server) = try await open("/close", "code=\(code)", id: id)
        #expect(await connection.nextError()?.closeCode == 1002)
        #expect(await server.result(id)?.hasPrefix("close 1002") == true)
    }

    @Test func anEmptyCloseIsReportedAs1005AndAnsweredEmpty() async throws {
        let id = makeID()
        let (connection, server) = try await open("/close", id: id)
        let error = await connection.nextError()
        #expect(error?.closeCode == 1005)
        #expect(await server.result(id) == "close none")
    }

    @Test func badClosePayloads() async throws {
        let shortID = makeID()
        let (short, server) = try await open("/close", "payload=03", id: shortID)
        #expect(await short.nextError()?.closeCode == 1002)
        #expect(await server.result(shortID)?.hasPrefix("close 1002") == true)
        let badReasonID = makeID()
        let (badReason, _) = try await open("/close", "payload=03e8cebae1bdb9ed", id: badReasonID)
        #expect(await badReason.nextError()?.closeCode == 1007)
        #expect(await server.result(badReasonID)?.hasPrefix("close 1007") == true)
        let (goodReason, _) = try await open("/close", "code=1000&reason=%CE%BA%CF%8C%CF%83%CE%BC%CE%B5", id: makeID())
        #expect(await goodReason.nextError()?.closeReason == "κόσμε")
    }

    @Test(arguments: ["", "midframe=1"])
    func anAbruptDropIs1006(query: String) async throws {
        let (connection, _) = try await open("/drop", query, id: makeID())
        let error = try #require(await connection.nextError())
        #expect(error.kind == .closed)
        #expect(error.closeCode == 1006)
        #expect(error.isRetriable)
        #expect(await connection.close().code == 1006)
    }

    @Test func aReceiveStoppedByItsCallerLeavesTheRestForTheNext() async throws {
        // A ping among the messages: answered inside whichever receive decodes it, none lost or lent twice.
        let frames =
            serverFrame(0x1, Array("m1".utf8)) + serverFrame(0x1, Array("m2".utf8)) + serverFrame(0x9, [1])
            + serverFrame(0x1, Array("m3".utf8), fin: false) + serverFrame(0x0, Array("+".utf8))
            + serverFrame(0x2, [4])
        let (connection, _) = try await open("/frames", "hex=\(hexString(frames))", id: makeID())
        var seen: [String] = []
        while seen.count < 4 {
            let lent = try await blocking {
                var texts: [String] = []
                let count = try connection.receive(timeout: .seconds(5) * TestEnvironment.patience) { message in
                    texts.append((message.isText ? "" : "binary ") + String(decoding: message.bytes, as: UTF8.self))
                    return false
                }
                return (count, texts)
            }
            #expect(lent.0 == 1 && lent.1.count == 1)
            seen += lent.1
        }
        #expect(seen == ["m1", "m2", "m3+", "binary \u{4}"])
        connection.abort()
    }

    @Test func closeGivesUpAfterTheCloseTimeoutWhenThePeerIsSilent() async throws {
        let id = makeID()
        let (connection, server) = try await open(
            "/silent",
            id: id,
            options: WebSocketOptions(closeTimeout: .milliseconds(300))
        )
        // Dead-peer detection: a receive that times out returns no messages and no error.
        #expect(try await blocking { try connection.receiveBatch(timeout: .milliseconds(100)) }.isEmpty)
        // Timed on the executor's thread around the blocking close: a task resumed late by a cooperative pool that
        // other tests keep busy (they run in parallel on a loaded box) must not count as the close's time.
        let (info, elapsed) = try await blocking {
            let start = ContinuousClock.now
            let info = connection.close(code: 1001, reason: "leaving")
            return (info, ContinuousClock.now - start)
        }
        #expect(info.code == 1006)
        #expect(elapsed >= .milliseconds(250) && elapsed < .seconds(10))
        #expect(await server.result(id) == "close 1001 leaving")
    }
}

extension String {
    /// Percent-encodes everything but unreserved characters (for the raw peer's query parameters).
    var addingPercentEncodingForQuery: String {
        utf8.map { byte in
            let unreserved =
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A)
                || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
            return unreserved ? String(UnicodeScalar(byte)) : "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16)
        }.joined()
    }
}
