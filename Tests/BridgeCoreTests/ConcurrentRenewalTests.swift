import BridgeHTTP
import BridgeSystem
import Synchronization
import Testing

@testable import BridgeDirectus

/// Two callers that find the same access token stale at once (the socket's TOKEN_EXPIRED and the refresher's
/// deadline, seen against the release build with 2 s tokens: "token refreshed", then in the same millisecond "refresh
/// token refused, logging in again"). Directus rotates a refresh token at its first use, so the second refresh with
/// it was refused and the session logged in again — with an `otp`, one already used, which Directus refuses
/// (docs/RELIABILITY.md, "Careless or hostile operators").
@Suite struct ConcurrentRenewalTests {
    /// Directus's token endpoints as far as the session uses them: a login hands out a refresh token, a refresh with
    /// the current one rotates it, any other is refused. A refresh waits (up to 2 s) until a second one arrives, so
    /// that two sent at once are both in flight before either is answered.
    final class RotatingDirectus: HTTPTransport {
        private struct State {
            var current = 0
            var logins = 0
            var refreshes = 0
        }
        private let state = Mutex(State())

        var logins: Int { state.withLock { $0.logins } }
        var refreshes: Int { state.withLock { $0.refreshes } }

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            let body = String(decoding: request.body ?? [], as: UTF8.self)
            if request.url.hasSuffix("/auth/login") {
                let generation = state.withLock { state in
                    state.logins += 1
                    state.current += 1
                    return state.current
                }
                return tokens(generation)
            }
            state.withLock { $0.refreshes += 1 }
            let deadline = ContinuousClock.now + .seconds(2)
            while refreshes < 2 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            let generation: Int? = state.withLock { state in
                guard body.contains("\"refresh-\(state.current)\"") else { return nil }
                state.current += 1
                return state.current
            }
            guard let generation else {
                let refusal = #"{"errors":[{"message":"Invalid user credentials.","extensions":{"code":"INVALID_CREDENTIALS"}}]}"#
                return HTTPResponse(status: 401, body: Array(refusal.utf8))
            }
            return tokens(generation)
        }

        private func tokens(_ generation: Int) -> HTTPResponse {
            let text = #"{"data":{"access_token":"access-\#(generation)","refresh_token":"refresh-\#(generation)","expires":900000}}"#
            return HTTPResponse(status: 200, body: Array(text.utf8))
        }
    }

    @Test func twoCallersRenewingTheSameTokenShareOneRefresh() async throws {
        let directus = RotatingDirectus()
        let client = DirectusClient(baseURL: "http://d", transport: directus, timeout: .seconds(10))
        let session = AuthSession(
            credentials: .login(email: "e@x", password: "pw", otp: "123456"), client: client, logger: .silent)
        try await session.start()
        let stale = try #require(await session.accessToken())
        async let first = session.renew(replacing: stale)
        async let second = session.renew(replacing: stale)
        let renewed = try await [first, second]
        #expect(renewed == ["access-2", "access-2"])
        #expect(directus.logins == 1, "the session logged in again: a refresh was refused")
        #expect(directus.refreshes == 1)
    }
}
