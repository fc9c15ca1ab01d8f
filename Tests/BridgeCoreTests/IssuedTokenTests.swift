import BridgeHTTP
import Testing

@testable import BridgeDirectus

/// Issue 23, item 6: tokens Directus issues go into the `Authorization` header. One with CR, LF or NUL is a bad
/// answer — retried like any answer the bridge cannot use — and never a header.
@Suite struct IssuedTokenTests {
    /// JSON texts of tokens that decode to a line break or NUL.
    static let broken = [#"abcdefgh\r\nX-Injected: yes"#, #"abcdefgh\nX"#, #"abcdefgh\u0000X"#]

    private func expectBadAnswer(_ body: () async throws(DirectusError) -> AuthTokens) async {
        do {
            _ = try await body()
            Issue.record("a token with a line break was accepted")
        } catch {
            #expect(error.kind == .invalidResponse && error.isRetriable, "\(error)")
            #expect(!error.description.contains("abcdefgh") && !error.description.contains("X-Injected"))
        }
    }

    @Test(arguments: broken)
    func anAccessTokenWithALineBreakIsABadAnswer(token: String) async {
        let transport = ScriptedTransport([ScriptedTransport.tokens(access: token, refresh: "refresh-token-ok")])
        let client = DirectusClient(baseURL: "http://d", transport: transport, timeout: .seconds(1))
        await expectBadAnswer { () throws(DirectusError) in
            try await client.login(email: "a@b.c", password: "pw", otp: nil)
        }
    }

    @Test(arguments: broken)
    func aRefreshTokenWithALineBreakIsABadAnswer(token: String) async {
        let transport = ScriptedTransport([ScriptedTransport.tokens(access: "access-token-ok", refresh: token)])
        let client = DirectusClient(baseURL: "http://d", transport: transport, timeout: .seconds(1))
        await expectBadAnswer { () throws(DirectusError) in try await client.refresh(refreshToken: "old-refresh") }
    }
}
