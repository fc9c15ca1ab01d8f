import BridgeHTTP
import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks

@Suite struct WebhookSignerTests {
    /// The example of the Standard Webhooks specification (and Svix's documentation).
    @Test func matchesTheStandardWebhooksVector() throws {
        let signer = try WebhookSigner(secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"])
        let signature = signer.signature(
            id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
            timestamp: 1_614_265_330,
            body: Array(#"{"test": 2432232314}"#.utf8)
        )
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }

    @Test func rawSecretsAreUsedAsTheirUTF8Bytes() throws {
        // Computed with standardwebhooks: Webhook(b"my raw secret").sign("evt_1", 1700000000, '{"a":1}').
        let signer = try WebhookSigner(secrets: ["my raw secret"])
        #expect(
            signer.signature(id: "evt_1", timestamp: 1_700_000_000, body: Array(#"{"a":1}"#.utf8))
                == "v1,6qkwKAqv4mlZDEeJJcw5/wabW/jQF52EW4U5FmFdY2E="
        )
        #expect(WebhookSigner.key(for: "my raw secret") == Array("my raw secret".utf8))
        #expect(WebhookSigner.key(for: "whsec_AAEC") == [0, 1, 2])
    }

    @Test func rotatedSecretsSignInOrderSeparatedBySpaces() throws {
        let first = try WebhookSigner(secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"])
        let second = try WebhookSigner(secrets: ["my raw secret"])
        let both = try WebhookSigner(secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "my raw secret"])
        let body = Array(#"{"x":"é"}"#.utf8)
        let expected = [first, second].compactMap { $0.signature(id: "evt_9", timestamp: 42, body: body) }
        #expect(both.signature(id: "evt_9", timestamp: 42, body: body) == expected.joined(separator: " "))
    }

    @Test func noSecretMeansNoSignatureAndABadWhsecIsRefused() throws {
        let unsigned = try WebhookSigner(secrets: [])
        #expect(!unsigned.isSigning)
        #expect(unsigned.signature(id: "a", timestamp: 1, body: []) == nil)
        #expect(throws: WebhookSigner.InvalidSecret.self) { try WebhookSigner(secrets: ["ok", "whsec_!!!"]) }
    }

    @Test func requestsCarryTheContractHeadersAndTheBodyUnchanged() throws {
        let builder = WebhookRequestBuilder(
            url: "https://example.com/hooks?x=1",
            userAgent: "directus-bridge/1.2.3",
            extraHeaders: [("x-source", "bridge")],
            timeout: .seconds(3),
            signer: try WebhookSigner(secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"])
        )
        let body = Array(#"{"id":"evt_1","n":1}"#.utf8)
        let request = builder.request(id: "evt_1", body: body, timestamp: 1_700_000_000)
        #expect(request.method == "POST")
        #expect(request.url == "https://example.com/hooks?x=1")
        #expect(request.body == body)
        #expect(request.timeout == .seconds(3))
        #expect(
            request.headers.map(\.name) == [
                "content-type", "user-agent", "webhook-id", "webhook-timestamp", "webhook-signature", "x-source",
            ]
        )
        #expect(request.header("content-type") == "application/json")
        #expect(request.header("user-agent") == "directus-bridge/1.2.3")
        #expect(request.header("webhook-id") == "evt_1")
        #expect(request.header("webhook-timestamp") == "1700000000")
        #expect(request.header("webhook-signature")?.hasPrefix("v1,") == true)
        let unsigned = WebhookRequestBuilder(
            url: "http://h/",
            userAgent: "u",
            extraHeaders: [],
            timeout: .seconds(1),
            signer: try WebhookSigner(secrets: [])
        )
        #expect(unsigned.request(id: "a", body: [], timestamp: 1).header("webhook-signature") == nil)
    }

    /// Random ids, bodies (multi-byte UTF-8 included) and secrets of both kinds, checked by the reference package.
    @Test func theStandardWebhooksPackageVerifiesOurSignatures() throws {
        let now = Timestamp.now().unixSeconds
        var cases: [[String: Any]] = []
        for index in 0..<24 {
            let raw = index % 2 == 0
            let keyBytes = (0..<(16 + index)).map { _ in UInt8.random(in: 0...255) }
            let secret =
                raw ? "raw secret \(index) ü \(UUID().uuidString)" : "whsec_" + Data(keyBytes).base64EncodedString()
            let id = "evt_\(UUID().uuidString.lowercased())"
            let body = #"{"id":"\#(id)","title":"Grüße \#(index) — \#(String(repeating: "x", count: index * 37))"}"#
            let signature = try #require(
                try WebhookSigner(secrets: [secret]).signature(id: id, timestamp: now, body: Array(body.utf8))
            )
            cases.append([
                "secret": secret, "raw": raw, "id": id, "timestamp": now, "body": body, "signature": signature,
            ])
        }
        let output = try runPython(
            "http_peers/verify_signatures.py",
            input: try JSONSerialization.data(withJSONObject: cases)
        )
        let results = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [Any])
        #expect(results.count == cases.count)
        for (index, result) in results.enumerated() {
            #expect(result as? Bool == true, "case \(index): \(result)")
        }
    }
}

/// Runs a script under Tests/tools with the test venv's Python, feeding `input` on stdin; returns stdout.
func runPython(_ script: String, input: Data) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: TestEnvironment.python)
    process.arguments = [TestEnvironment.tool(script)]
    let stdin = Pipe()
    let stdout = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    try process.run()
    stdin.fileHandleForWriting.write(input)
    try stdin.fileHandleForWriting.close()
    let data = stdout.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
}
