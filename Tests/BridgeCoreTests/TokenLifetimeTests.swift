import BridgeHTTP
import BridgeSystem
import Synchronization
import Testing

@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks


/// Token lifetimes from the server (issue 10, defect 7): docs/RELIABILITY.md — a lifetime under
/// 5 s is treated as 5 s, a huge one cannot overflow, and refreshed tokens do not pile up in the log redactor.
@Suite struct TokenLifetimeTests {
    private func login(expires: String) -> @Sendable (HTTPRequest) throws -> HTTPResponse {
        ScriptedTransport.json(
            200, #"{"data":{"access_token":"access-token","refresh_token":"refresh-token","expires":\#(expires)}}"#)
    }

    @Test(arguments: [
        "0", "-1", "-900000", "-9223372036854775808", "-99999999999999999999999", "1", "4999", "0.5", "-1e300",
        "\"900000\"", "true", "{}",
    ])
    func aLifetimeUnderFiveSecondsIsPlannedAsFiveSeconds(expires: String) async throws {
        let transport = ScriptedTransport([login(expires: expires)])
        let client = DirectusClient(baseURL: "http://d", transport: transport, timeout: .seconds(1))
        let session = AuthSession(
            credentials: .login(email: "e@x", password: "pw", otp: nil), client: client, logger: .silent)
        let before = ContinuousClock.now
        try await session.start()
        let deadline = try #require(await session.renewalDeadline())
        // Renewed at 75 % of 5 s: not before 3.75 s after the login (and not in a tight loop).
        #expect(deadline >= before + .milliseconds(3750))
        #expect(deadline <= ContinuousClock.now + .milliseconds(3750))
    }

    @Test(arguments: [
        "9223372036854775807", "99999999999999999999999", "1e300", "31622400000", "1e400",
    ])
    func aHugeLifetimeIsCappedWithoutOverflow(expires: String) async throws {
        let transport = ScriptedTransport([login(expires: expires)])
        let client = DirectusClient(baseURL: "http://d", transport: transport, timeout: .seconds(1))
        let session = AuthSession(
            credentials: .login(email: "e@x", password: "pw", otp: nil), client: client, logger: .silent)
        try await session.start()
        let deadline = try #require(await session.renewalDeadline())
        #expect(deadline <= ContinuousClock.now + AuthTokens.longestLifetime)
        #expect(deadline > ContinuousClock.now + .seconds(86_400))
    }

    @Test func anAbsentOrNullLifetimeNeverExpires() async throws {
        for expires in ["null", nil] as [String?] {
            let body =
                expires.map { #"{"data":{"access_token":"access-token","expires":\#($0)}}"# }
                ?? #"{"data":{"access_token":"access-token"}}"#
            let transport = ScriptedTransport([ScriptedTransport.json(200, body)])
            let client = DirectusClient(baseURL: "http://d", transport: transport, timeout: .seconds(1))
            let session = AuthSession(
                credentials: .login(email: "e@x", password: "pw", otp: nil), client: client, logger: .silent)
            try await session.start()
            #expect(await session.renewalDeadline() == nil)
        }
    }

    /// Fifty refreshes leave the redactor with the current and previous access and refresh tokens only.
    @Test func refreshedTokensDoNotPileUpInTheRedactor() async throws {
        let answers = (0...50).map { generation in
            ScriptedTransport.tokens(access: "access-token-\(generation)", refresh: "refresh-token-\(generation)")
        }
        let transport = ScriptedTransport(answers)
        let client = DirectusClient(baseURL: "http://d", transport: transport, timeout: .seconds(1))
        let redactor = Mutex(Redactor(secrets: ["pw-of-the-user"]))
        let session = AuthSession(
            credentials: .login(email: "e@x", password: "pw-of-the-user", otp: nil), client: client, logger: .silent,
            redact: { secret, kind in redactor.withLock { $0.rotate(secret, kind: kind) } })
        try await session.start()
        for generation in 0..<50 {
            try await session.renew(replacing: "access-token-\(generation)")
        }
        let probe = "access-token-50 access-token-49 refresh-token-50 access-token-1"
        let (count, text) = redactor.withLock { ($0.secrets.count, $0.redact(probe)) }
        #expect(count == 1 + 2 * Redactor.generationsKept)
        #expect(text == "[REDACTED] [REDACTED] [REDACTED] access-token-1")
    }
}
