import Testing

@testable import BridgeRedis

/// The wire format without a server: commands as RESP arrays, and hiredis's parser behind the reply checks.
@Suite struct RedisWireTests {
    @Test func commandsAreEncodedAsArraysOfBulkStrings() {
        var commands = RedisCommands()
        commands.command("SET", "k", "")
        commands.begin(arguments: 2)
        commands.argument("XLEN")
        commands.argument(Array("é\r\n".utf8))
        #expect(
            String(decoding: commands.bytes, as: UTF8.self)
                == "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n*2\r\n$4\r\nXLEN\r\n$4\r\né\r\n\r\n"
        )
        #expect(commands.count == 2 && commands.ends == [26, commands.bytes.count])
    }

    @Test func repliesArriveWhateverTheChunking() throws {
        let wire = "+OK\r\n-ERR bad\r\n:-42\r\n$5\r\nhe\r\no\r\n$-1\r\n*2\r\n:1\r\n$3\r\n1-0\r\n*0\r\n"
        let expected: [RedisReply] = [
            .status("OK"), .error("ERR bad"), .integer(-42), .bulk(Array("he\r\no".utf8)), .null,
            .array([.integer(1), .bulk(Array("1-0".utf8))]), .array([]),
        ]
        for chunk in [1, 2, 7, wire.utf8.count] {
            let reader = RedisReplyReader()
            var replies: [RedisReply] = []
            let bytes = Array(wire.utf8)
            for start in stride(from: 0, to: bytes.count, by: chunk) {
                try bytes[start..<min(bytes.count, start + chunk)].withUnsafeBytes { try reader.feed($0) }
                while let reply = try reader.next() { replies.append(reply) }
            }
            #expect(replies == expected, "chunks of \(chunk)")
        }
    }

    @Test func malformedAndOversizedRepliesAreProtocolViolations() throws {
        let cases: [(String, String)] = [
            ("garbage", "hello\r\n"),
            ("a negative bulk length", "$-5\r\n"),
            ("an array of 2 billion", "*2000000000\r\n"),
            ("nesting 20 deep", String(repeating: "*1\r\n", count: 20) + ":1\r\n"),
            ("a bulk string past the limit", "$2000\r\n" + String(repeating: "x", count: 1500)),
        ]
        for (name, wire) in cases {
            let reader = RedisReplyReader(maximumReplyBytes: 1024)
            do throws(RedisError) {
                let bytes = Array(wire.utf8)
                try bytes.withUnsafeBytes { raw in Result { () throws(RedisError) in try reader.feed(raw) } }.get()
                while try reader.next() != nil {}
                Issue.record("\(name): accepted")
            } catch {
                #expect(error.kind == .protocolViolation, "\(name): \(error)")
            }
        }
    }

    @Test func theLimitCountsOneReplyAtATime() throws {
        let reader = RedisReplyReader(maximumReplyBytes: 64)
        for _ in 0..<100 {
            try Array("$40\r\n\(String(repeating: "y", count: 40))\r\n".utf8).withUnsafeBytes { try reader.feed($0) }
            #expect(try reader.next() == .bulk(Array(repeating: UInt8(ascii: "y"), count: 40)))
        }
    }

    @Test func theDedupScriptsRepliesAreChecked() throws {
        let appended = RedisReply.array([.integer(1), .bulk(Array("1700000000000-3".utf8))])
        #expect(try RedisDedupScript.outcome(of: appended).isStored)
        guard
            case .duplicate("5-0") = try RedisDedupScript.outcome(of: .array([.integer(0), .bulk(Array("5-0".utf8))]))
        else {
            Issue.record("not a duplicate")
            return
        }
        for reply: RedisReply in [
            .array([.integer(2), .bulk(Array("1-0".utf8))]), .array([.integer(1), .bulk(Array("1-x".utf8))]),
            .array([.integer(1)]), .bulk(Array("1-0".utf8)), .null,
            .array([.integer(1), .bulk(Array("123456789012345678901-0".utf8))]),
        ] {
            #expect(throws: RedisError.self) { try RedisDedupScript.outcome(of: reply) }
        }
        #expect(RedisDedupScript.sha1.utf8.count == 40)
    }

    @Test func serverErrorsAreClassified() {
        #expect(RedisError.fromServer("WRONGPASS invalid username-password pair", context: "x").kind == .authentication)
        #expect(RedisError.fromServer("NOAUTH Authentication required.", context: "x").kind == .authentication)
        #expect(RedisError.fromServer("LOADING Redis is loading", context: "x").kind == .retriable)
        #expect(RedisError.fromServer("OOM command not allowed", context: "x").kind == .retriable)
        #expect(RedisError.fromServer("WRONGTYPE Operation against a key", context: "x").kind == .rejected)
    }

    @Test func settingsCheckTheURL() throws {
        #expect(try RedisSettings(url: "redis://h/12").database == 12)
        #expect(try RedisSettings(url: "rediss://h").usesTLS)
        #expect(try RedisSettings(url: "redis://:pw@h").secretValues == ["pw"])
        for url in ["redis://h/x", "redis://h/-1", "redis://h/99999999", "amqp://h"] {
            #expect(throws: RedisError.self) { try RedisSettings(url: url) }
        }
        #expect(throws: RedisError.self) { try RedisSettings(url: "redis://h", maxInFlight: 0) }
    }
}
