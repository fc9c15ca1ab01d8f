import BridgeTestSupport
import BridgeJSON
import Testing

/// Every server message shape of directus-protocol.md §3, §5.3 and §7, plus hostile input.
@Suite struct DirectusServerMessageTests {
    func decode(_ text: String) throws -> (DirectusServerMessage, [UInt8]) {
        let bytes = Array(text.utf8)
        return (try DirectusServerMessage(decoding: bytes), bytes)
    }

    func items(_ message: DirectusServerMessage, _ bytes: [UInt8]) -> [String]? {
        guard case .array(let ranges) = message.data else { return nil }
        return ranges.map { bytes.text(of: $0) }
    }

    // MARK: - Subscription events (§5.3)

    @Test func createWithOneItem() throws {
        let (message, bytes) = try decode(
            #"{"type":"subscription","event":"create","data":[{"id":1,"title":"Hello","tags":["a","b"]}],"uid":"articles"}"#
        )
        #expect(message.type == .subscription)
        #expect(message.event == .create)
        #expect(message.uid == "articles")
        #expect(message.status == nil)
        #expect(message.error == nil)
        #expect(items(message, bytes) == [#"{"id":1,"title":"Hello","tags":["a","b"]}"#])
    }

    @Test func keyOrderDoesNotMatter() throws {
        let (message, bytes) = try decode(
            #"{"uid":"articles","data":[{"id":1}],"event":"create","type":"subscription"}"#
        )
        #expect(message.type == .subscription)
        #expect(message.event == .create)
        #expect(message.uid == "articles")
        #expect(items(message, bytes) == [#"{"id":1}"#])
    }

    @Test func prettyPrintedMessage() throws {
        let (message, bytes) = try decode(
            "{\n  \"type\" : \"subscription\",\n  \"event\" : \"update\",\n  \"data\" : [ { \"id\" : 1 } ,\n {\"id\":2} ]\n}\n"
        )
        #expect(message.event == .update)
        #expect(message.uid == nil)
        #expect(items(message, bytes) == [#"{ "id" : 1 }"#, #"{"id":2}"#])
    }

    @Test func initWithData() throws {
        let (message, bytes) = try decode(
            #"{"type":"subscription","event":"init","data":[{"id":1},{"id":2}],"uid":"s1"}"#
        )
        #expect(message.event == .initial)
        #expect(items(message, bytes) == [#"{"id":1}"#, #"{"id":2}"#])
    }

    @Test func initWithEmptyDataAndMeta() throws {
        let (message, _) = try decode(
            #"{"type":"subscription","event":"init","data":[],"meta":{"total_count":0,"filter_count":0},"uid":"s1"}"#
        )
        #expect(message.event == .initial)
        #expect(message.data == .array([]))
        #expect(message.uid == "s1")
    }

    @Test func initWithoutDataWhenAnEventFilterWasGiven() throws {
        let (message, _) = try decode(#"{"type":"subscription","event":"init","uid":"s1"}"#)
        #expect(message.event == .initial)
        #expect(message.data == .absent)
    }

    @Test func updateWithSeveralItems() throws {
        let (message, bytes) = try decode(
            #"{"type":"subscription","event":"update","data":[{"id":1,"n":"a"},{"id":2,"n":"b"},{"id":3,"n":"c"}],"uid":"s1"}"#
        )
        #expect(message.event == .update)
        #expect(items(message, bytes)?.count == 3)
        #expect(items(message, bytes)?.last == #"{"id":3,"n":"c"}"#)
    }

    @Test func deleteWithStringKeys() throws {
        let (message, bytes) = try decode(#"{"type":"subscription","event":"delete","data":["7","8"],"uid":"s1"}"#)
        #expect(message.event == .delete)
        guard case .array(let keys) = message.data else {
            Issue.record("data is not an array")
            return
        }
        #expect(keys.map(\.kind) == [.string, .string])
        #expect(keys.map { $0.keyString(in: bytes) } == ["7", "8"])
    }

    @Test func deleteWithNumericKeys() throws {
        let (message, bytes) = try decode(
            #"{"type":"subscription","event":"delete","data":[7,-8,90071992547409931],"uid":"s1"}"#
        )
        guard case .array(let keys) = message.data else {
            Issue.record("data is not an array")
            return
        }
        #expect(keys.map { $0.keyString(in: bytes) } == ["7", "-8", "90071992547409931"])
    }

    @Test func itemSubscriptionObjectData() throws {
        let (message, bytes) = try decode(
            #"{"type":"subscription","event":"update","data":{"id":42,"title":"x"},"uid":"item-42"}"#
        )
        guard case .object(let item) = message.data else {
            Issue.record("data is not an object")
            return
        }
        #expect(bytes.text(of: item) == #"{"id":42,"title":"x"}"#)
        #expect(item.member("id", in: bytes)?.keyString(in: bytes) == "42")
    }

    @Test func itemSubscriptionScalarDeleteData() throws {
        let (message, bytes) = try decode(#"{"type":"subscription","event":"delete","data":"42","uid":"item-42"}"#)
        guard case .scalar(let key) = message.data else {
            Issue.record("data is not a scalar")
            return
        }
        #expect(key.kind == .string)
        #expect(key.keyString(in: bytes) == "42")
        let (nullData, _) = try decode(#"{"type":"items","data":null,"uid":"r1"}"#)
        #expect(nullData.data == .scalar(JSONRange(start: 23, end: 27, kind: .null)))
    }

    @Test func numericUIDIsStringified() throws {
        #expect(try decode(#"{"type":"subscription","event":"unsubscribe","uid":5}"#).0.uid == "5")
        #expect(try decode(#"{"type":"subscription","event":"unsubscribe","uid":-1.5e2}"#).0.uid == "-1.5e2")
        #expect(try decode(#"{"type":"subscription","event":"unsubscribe","uid":null}"#).0.uid == nil)
        let (ack, _) = try decode(#"{"type":"subscription","event":"unsubscribe","uid":"s1"}"#)
        #expect(ack.event == .unsubscribe)
        #expect(ack.data == .absent)
    }

    @Test func escapedStringsAreDecoded() throws {
        let (message, _) = try decode(
            #"{"t\u0079pe":"subscr\u0069ption","event":"cr\u0065ate","uid":"a\"b\\c\u00e9\ud83d\ude00","data":[]}"#
        )
        #expect(message.type == .subscription)
        #expect(message.event == .create)
        #expect(message.uid == "a\"b\\cé😀")
    }

    @Test func unknownTypesAndEventsAreKept() throws {
        let (message, _) = try decode(#"{"type":"collab","event":"join","extra":{"nested":[1,2,{"x":null}]}}"#)
        #expect(message.type == .other("collab"))
        #expect(message.event == .other("join"))
        #expect(message.type.rawValue == "collab")
        #expect(DirectusMessageType(rawValue: "ping") == .ping)
        #expect(DirectusEvent(rawValue: "init") == .initial)
        #expect(DirectusEvent.initial.rawValue == "init")
        #expect(DirectusStatus(rawValue: "ok") == .ok)
    }

    // MARK: - Auth, heartbeat (§2, §4)

    /// A refresh token in `auth ok` (socket logins with email/password or a refresh token, §2.3) is skipped: the
    /// bridge authenticates the socket with an access token and has no use for one, whatever its type.
    @Test func authOkWithARefreshTokenIgnoresIt() throws {
        let (message, _) = try decode(#"{"type":"auth","status":"ok","uid":"login","refresh_token":"r3fr3sh-t0k3n"}"#)
        #expect(message == DirectusServerMessage(type: .auth, status: .ok, uid: "login"))
        let (numeric, _) = try decode(#"{"type":"auth","status":"ok","refresh_token":42}"#)
        #expect(numeric == DirectusServerMessage(type: .auth, status: .ok))
    }

    @Test func authOkWithoutExtras() throws {
        let (message, _) = try decode(#"{"type":"auth","status":"ok"}"#)
        #expect(message == DirectusServerMessage(type: .auth, status: .ok))
    }

    @Test func pingAndPong() throws {
        #expect(try decode(#"{"type":"ping"}"#).0 == DirectusServerMessage(type: .ping))
        #expect(try decode(#"{"type":"pong"}"#).0 == DirectusServerMessage(type: .pong))
        #expect(try decode(#"{"type":"pong","uid":"hb-1"}"#).0 == DirectusServerMessage(type: .pong, uid: "hb-1"))
        #expect(try decode(#"{"type":"pong","uid":7}"#).0 == DirectusServerMessage(type: .pong, uid: "7"))
    }

    // MARK: - Errors (§3.1, §7.2)

    @Test(arguments: [
        (
            #"{"type":"auth","status":"error","error":{"code":"AUTH_FAILED","message":"Authentication handshake failed."}}"#,
            DirectusMessageType.auth, "AUTH_FAILED", "Authentication handshake failed.", String?.none
        ),
        (
            #"{"type":"auth","status":"error","error":{"code":"AUTH_FAILED","message":"Authentication failed."},"uid":"re"}"#,
            .auth, "AUTH_FAILED", "Authentication failed.", "re"
        ),
        (
            #"{"type":"auth","status":"error","error":{"code":"TOKEN_EXPIRED","message":"Token expired."}}"#,
            .auth, "TOKEN_EXPIRED", "Token expired.", nil
        ),
        (
            #"{"type":"auth","status":"error","error":{"code":"AUTH_TIMEOUT","message":"Authentication timed out."}}"#,
            .auth, "AUTH_TIMEOUT", "Authentication timed out.", nil
        ),
        (
            #"{"type":"subscribe","status":"error","error":{"code":"INVALID_COLLECTION","message":"The provided collection does not exists or is not accessible."},"uid":"s1"}"#,
            .subscribe, "INVALID_COLLECTION", "The provided collection does not exists or is not accessible.", "s1"
        ),
        (
            #"{"type":"subscribe","status":"error","error":{"code":"FORBIDDEN","message":"You don't have permission to access this."}}"#,
            .subscribe, "FORBIDDEN", "You don't have permission to access this.", nil
        ),
        (
            #"{"type":"server","status":"error","error":{"code":"INVALID_PAYLOAD","message":"Unable to parse the incoming message."}}"#,
            .server, "INVALID_PAYLOAD", "Unable to parse the incoming message.", nil
        ),
        (
            #"{"type":"server","status":"error","error":{"code":"REQUESTS_EXCEEDED","message":"Too many messages, retry after 812ms."}}"#,
            .server, "REQUESTS_EXCEEDED", "Too many messages, retry after 812ms.", nil
        ),
        (
            #"{"type":"items","status":"error","error":{"code":"INVALID_PAYLOAD","message":"Either 'ids', 'id' or 'query' is required for a DELETE request."},"uid":3}"#,
            .items, "INVALID_PAYLOAD", "Either 'ids', 'id' or 'query' is required for a DELETE request.", "3"
        ),
        (
            #"{"type":"license","status":"error","error":{"code":"SERVICE_UNAVAILABLE","message":"License is in a locked state and must be resolved"}}"#,
            .other("license"), "SERVICE_UNAVAILABLE", "License is in a locked state and must be resolved", nil
        ),
        (
            #"{"error":{"extensions":{"x":[1]},"message":"m\n2","code":"C"},"uid":"u","status":"error","type":"unsubscribe"}"#,
            .unsubscribe, "C", "m\n2", "u"
        ),
    ])
    func errorEnvelope(text: String, type: DirectusMessageType, code: String, message: String, uid: String?) throws {
        let (decoded, _) = try decode(text)
        #expect(decoded.type == type)
        #expect(decoded.status == .error)
        #expect(decoded.error == DirectusErrorPayload(code: code, message: message))
        #expect(decoded.uid == uid)
        #expect(decoded.data == .absent)
    }

    // MARK: - Hostile input

    @Test(arguments: [
        #"{"type":"subscription","event":"create","data":[{"id":1},],"uid":"x"}"#,
        #"{"type":"subscription","event":"create","data":[{"id":01}],"uid":"x"}"#,
        #"{"type":"subscription","data":[{"id":1}],"uid":"x"}x"#,
        #"{"type":"ping",}"#,
        #"{"type":"ping""#,
        #"{"type":"ping"}}"#,
        #"{"type":"ping"} {"type":"ping"}"#,
        #"{"type":"subscription","data":[{"a":"\x"}]}"#,
        #"{"type":"subscription","data":[{"a":"\ud800"}]}"#,
        "{\"type\":\"subscription\",\"data\":[{\"a\":\"tab\tinside\"}]}",
        #"{"type":"subscription","data":{"a":1}"#,
        #"{"type":"subscription","data":[1 2]}"#,
        #"{"type":"subscription","error":{"code":"X",}}"#,
        #"{type:"ping"}"#,
        #"{"type":'ping'}"#,
        "",
        "   ",
        "\u{FEFF}{\"type\":\"ping\"}",
    ])
    func invalidJSONIsATypedError(_ text: String) {
        #expect {
            _ = try DirectusServerMessage(decoding: Array(text.utf8))
        } throws: { error in
            guard case .invalidJSON = error as? DirectusMessageError else { return false }
            return !(error as! DirectusMessageError).isRetriable
        }
    }

    @Test func wrongShapesAreTypedErrors() {
        let cases: [(String, DirectusMessageError)] = [
            ("[1,2]", .notAnObject),
            ("\"ping\"", .notAnObject),
            ("null", .notAnObject),
            ("{}", .missingType),
            (#"{"type":null}"#, .missingType),
            (#"{"event":"create","data":[]}"#, .missingType),
            (#"{"type":1}"#, .invalidField("type")),
            (#"{"type":"subscription","event":["create"]}"#, .invalidField("event")),
            (#"{"type":"auth","status":true}"#, .invalidField("status")),
            (#"{"type":"ping","uid":{"a":1}}"#, .invalidField("uid")),
            (#"{"type":"ping","uid":true}"#, .invalidField("uid")),
            (#"{"type":"auth","status":"error","error":"AUTH_FAILED"}"#, .invalidField("error")),
            (#"{"type":"auth","status":"error","error":{"code":401}}"#, .invalidField("error.code")),
        ]
        for (text, expected) in cases {
            #expect(throws: expected, "\(text)") { try DirectusServerMessage(decoding: Array(text.utf8)) }
        }
        // Syntax errors win over shape errors.
        #expect {
            try DirectusServerMessage(decoding: Array(#"{"type":1,}"#.utf8))
        } throws: { error in
            if case .invalidJSON = error as? DirectusMessageError { return true }
            return false
        }
    }

    @Test func deepNestingInsideDataIsRejected() {
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        let text = #"{"type":"subscription","event":"create","data":["# + deep + "]}"
        #expect {
            try DirectusServerMessage(decoding: Array(text.utf8))
        } throws: { error in
            guard case .invalidJSON(let syntax) = error as? DirectusMessageError else { return false }
            return syntax.reason == .nestingTooDeep
        }
        // 509 levels inside data (511 with envelope and array) are fine; the whole frame is at most 512 deep.
        let ok = String(repeating: "[", count: 510) + String(repeating: "]", count: 510)
        let okText = #"{"type":"subscription","data":["# + ok + "]}"
        #expect((try? DirectusServerMessage(decoding: Array(okText.utf8))) != nil)
        let tooDeep = "[" + ok + "]"
        let tooDeepText = #"{"type":"subscription","data":["# + tooDeep + "]}"
        #expect((try? DirectusServerMessage(decoding: Array(tooDeepText.utf8))) == nil)
        #expect(JSONScanner.isValid(Array(okText.utf8)))
        #expect(!JSONScanner.isValid(Array(tooDeepText.utf8)))
    }

    /// Random byte mutations of real messages: decoding never crashes, and succeeds only on valid JSON objects.
    @Test func mutatedFramesNeverCrashAndNeverPassInvalidJSON() {
        let seeds = [
            #"{"type":"subscription","event":"create","data":[{"id":1,"title":"Hé\"llo","n":[1.5e3,null,true]}],"uid":"a"}"#,
            #"{"type":"auth","status":"error","error":{"code":"AUTH_FAILED","message":"x\u00e9"},"uid":5}"#,
            #"{"type":"subscription","event":"delete","data":["7",8],"uid":"s"}"#,
        ].map { Array($0.utf8) }
        let alphabet = Array(#"{}[],:"\ 0123456789-+.eEtrufalsn"#.utf8) + [0x00, 0x1F, 0x7F, 0x80, 0xC3, 0xFF]
        var random = SplitMix64(seed: 0x5EED)
        var accepted = 0
        for iteration in 0..<20_000 {
            var bytes = seeds[iteration % seeds.count]
            for _ in 0...(Int(random.next() % 3)) {
                let position = Int(random.next() % UInt64(bytes.count))
                switch random.next() % 4 {
                case 0: bytes.remove(at: position)
                case 1: bytes.insert(alphabet[Int(random.next() % UInt64(alphabet.count))], at: position)
                case 2: bytes[position] = alphabet[Int(random.next() % UInt64(alphabet.count))]
                default: bytes = Array(bytes[..<position])
                }
                if bytes.isEmpty { break }
            }
            let valid = JSONScanner.isValid(bytes)
            do {
                let message = try DirectusServerMessage(decoding: bytes)
                accepted += 1
                #expect(valid, "accepted invalid JSON: \(String(decoding: bytes, as: UTF8.self))")
                if case .array(let ranges) = message.data {
                    for range in ranges { #expect(JSONScanner.isValid(Array(bytes[range.offsets]))) }
                }
            } catch .invalidJSON {
                #expect(!valid, "rejected valid JSON: \(String(decoding: bytes, as: UTF8.self))")
            } catch {
                #expect(valid)
            }
        }
        #expect(accepted > 100)  // the mutations leave enough valid frames to exercise the accepting path
    }
}
