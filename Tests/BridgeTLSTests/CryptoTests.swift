import BridgeSystem
import Testing

@testable import BridgeTLS

private func hex(_ bytes: [UInt8]) -> String {
    bytes.map { byte in
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }.joined()
}

@Suite struct CryptoTests {
    @Test func sha1MatchesFIPSVectors() {
        #expect(hex(Crypto.sha1(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(Crypto.sha1([UInt8]())) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        // A non-contiguous collection takes the copying path.
        #expect(hex(Crypto.sha1("abc".utf8.lazy.map { $0 })) == "a9993e364706816aba3e25717850c26c9cd0d89d")
    }

    @Test(arguments: [
        // RFC 4231 test cases 1, 2 and 6, and the empty key and message.
        (
            [UInt8](repeating: 0x0b, count: 20), "Hi There",
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        ),
        (
            Array("Jefe".utf8), "what do ya want for nothing?",
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        ),
        (
            [UInt8](repeating: 0xaa, count: 131), "Test Using Larger Than Block-Size Key - Hash Key First",
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        ),
        ([], "", "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad"),
    ])
    func hmacSHA256MatchesRFC4231(key: [UInt8], message: String, expected: String) {
        #expect(hex(Crypto.hmacSHA256(key: key, message: Array(message.utf8))) == expected)
    }

    @Test func hmacOverPartsEqualsHMACOverTheConcatenation() {
        let key = Array("whsec-key".utf8)
        let id = Array("msg_1".utf8)
        let dot = Array(".".utf8)
        let stamp = Array("1700000000".utf8)
        let body = Array("{}".utf8)
        let whole = Crypto.hmacSHA256(key: key, message: id + dot + stamp + dot + body)
        let parts = id.withUnsafeBytes { a in
            dot.withUnsafeBytes { b in
                stamp.withUnsafeBytes { c in
                    body.withUnsafeBytes { d in Crypto.hmacSHA256(key: key, parts: [a, b, c, b, d]) }
                }
            }
        }
        #expect(parts == whole)
    }

    @Test func preparedKeyGivesTheSameCodeEveryTimeAndFromManyThreads() async {
        let signer = HMACSHA256(key: Array("Jefe".utf8))
        let message = Array("what do ya want for nothing?".utf8)
        let expected = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        #expect(hex(signer.authenticationCode(message)) == expected)
        #expect(hex(signer.authenticationCode(message)) == expected)
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    (0..<200).allSatisfy { _ in hex(signer.authenticationCode(message)) == expected }
                }
            }
            return await group.reduce(true) { $0 && $1 }
        }
        #expect(results)
    }

    @Test(arguments: [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ])
    func base64MatchesRFC4648(plain: String, encoded: String) {
        #expect(Crypto.base64Encode(Array(plain.utf8)) == encoded)
        #expect(Crypto.base64Decode(encoded) == Array(plain.utf8))
    }

    @Test func base64RoundTripsEveryLengthAndByte() {
        for length in 0..<70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 37 + length) }
            #expect(Crypto.base64Decode(Crypto.base64Encode(bytes)) == bytes)
        }
        let all = (0...255).map { UInt8($0) }
        #expect(Crypto.base64Decode(Crypto.base64Encode(all)) == all)
    }

    @Test(arguments: ["Z", "Zg=", "Zm9v!", "Zh==", "Zg==Zg==", "Zm9v\n", "=", "Zm9vY===", "Zm 9v"])
    func base64DecodeRejectsMalformedText(text: String) {
        #expect(Crypto.base64Decode(text) == nil)
    }

    @Test func base64DecodeAcceptsMissingPadding() {
        #expect(Crypto.base64Decode("Zg") == Array("f".utf8))
        #expect(Crypto.base64Decode("Zm8") == Array("fo".utf8))
    }

    @Test func randomBytesHaveTheRequestedCountAndDiffer() {
        let first = Crypto.randomBytes(count: 32)
        let second = Crypto.randomBytes(count: 32)
        #expect(first.count == 32)
        #expect(first != second)
        #expect(Crypto.randomBytes(count: 0).isEmpty)
    }
}

@Suite struct TLSContextTests {
    @Test func aMissingCAFileIsAConfigurationError() {
        #expect {
            try TLSContext.make(configuration: TLSConfiguration(caFile: "/nonexistent/ca.pem"))
        } throws: { error in
            guard let error = error as? TLSError else { return false }
            return error.kind == .configuration && !error.isRetriable && error.message.contains("/nonexistent/ca.pem")
                && !error.errorStack.isEmpty
        }
    }

    @Test func theDefaultConfigurationLoads() throws {
        let context = try TLSContext.make(configuration: TLSConfiguration())
        #expect(context.configuration == TLSConfiguration())
    }
}
