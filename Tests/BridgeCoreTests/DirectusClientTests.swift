import BridgeHTTP
import BridgeJSON
@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks
import Synchronization
import Testing

/// A scripted HTTP transport: answers requests in order and records them.
final class ScriptedTransport: HTTPTransport {
    private let script: Mutex<[@Sendable (HTTPRequest) throws -> HTTPResponse]>
    private let log = Mutex<[HTTPRequest]>([])

    init(_ answers: [@Sendable (HTTPRequest) throws -> HTTPResponse]) { script = Mutex(answers) }

    var requests: [HTTPRequest] { log.withLock { $0 } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        log.withLock { $0.append(request) }
        let next = script.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        guard let next else { return HTTPResponse(status: 599, body: Array("no scripted answer".utf8)) }
        return try next(request)
    }

    static func json(_ status: Int, _ text: String) -> @Sendable (HTTPRequest) throws -> HTTPResponse {
        { _ in HTTPResponse(status: status, body: Array(text.utf8)) }
    }

    static func tokens(access: String, refresh: String, expires: Int = 900_000) -> @Sendable (HTTPRequest) throws -> HTTPResponse {
        json(200, #"{"data":{"access_token":"\#(access)","refresh_token":"\#(refresh)","expires":\#(expires)}}"#)
    }
}

@Suite struct DirectusClientTests {
    @Test func errorEnvelopesBecomeTypedErrors() async {
        let transport = ScriptedTransport([
            ScriptedTransport.json(401, #"{"errors":[{"message":"Invalid user credentials.","extensions":{"code":"INVALID_CREDENTIALS"}}]}"#),
            ScriptedTransport.json(401, #"{"errors":[{"message":"Token expired.","extensions":{"code":"TOKEN_EXPIRED"}}]}"#),
            ScriptedTransport.json(403, #"{"errors":[{"message":"You don't have permission.","extensions":{"code":"FORBIDDEN"}}]}"#),
            ScriptedTransport.json(503, "<html>bad gateway</html>"),
        ])
        let client = DirectusClient(baseURL: "http://d/", transport: transport, timeout: .seconds(1))
        var errors: [DirectusError] = []
        for _ in 0..<4 {
            do {
                _ = try await client.request("GET", "/users/me", token: "t")
            } catch {
                errors.append(error)
            }
        }
        #expect(errors.map(\.code) == ["INVALID_CREDENTIALS", "TOKEN_EXPIRED", "FORBIDDEN", nil])
        #expect(errors[0].isCredentialsRejected && !errors[0].isRetriable)
        #expect(errors[1].isTokenExpired && !errors[1].isCredentialsRejected)
        #expect(errors[2].isForbidden && !errors[2].isCredentialsRejected)
        #expect(errors[3].isRetriable && errors[3].message.contains("bad gateway"))
        #expect(transport.requests.first?.url == "http://d/users/me")
        #expect(transport.requests.first?.header("authorization") == "Bearer t")
    }

    @Test func transportFailuresAreRetriable() async {
        let transport = ScriptedTransport([{ request in
            throw HTTPClientError(kind: .couldNotConnect, message: "refused", url: request.url)
        }])
        let client = DirectusClient(baseURL: "http://d", transport: transport, timeout: .seconds(1))
        await #expect {
            try await client.request("GET", "/server/ping")
        } throws: { error in
            (error as? DirectusError).map { $0.kind == .transport && $0.isRetriable } ?? false
        }
    }

    @Test func anAnswerOverTheLimitIsTooLargeNotABrokenAnswerWorthRetrying() async throws {
        // The client keeps the first bytes of an answer over its limit (`bodyTruncated`), or fails the transfer:
        // either way the caller learns that the answer was too large, never that it was not JSON.
        let transport = ScriptedTransport([
            { _ in HTTPResponse(status: 200, body: Array(#"{"data":[{"id":1},{"#.utf8), bodyTruncated: true) },
            { request in throw HTTPClientError(kind: .tooLarge, message: "body exceeds 10 bytes", url: request.url) },
            ScriptedTransport.json(200, #"{"data":[{"id":1}]}"#),
        ])
        let client = DirectusClient(baseURL: "http://d", transport: transport, timeout: .seconds(1))
        for _ in 0..<2 {
            await #expect {
                try await client.exchange("GET", "/activity", maxResponseBytes: 10)
            } throws: { error in
                (error as? DirectusError).map { $0.kind == .tooLarge && !$0.isRetriable } ?? false
            }
        }
        let answer = try await client.exchange("GET", "/activity", maxResponseBytes: 1 << 20)
        #expect(answer.bytes == 19 && answer.json["data"]?[0]?["id"] == 1)
        #expect(transport.requests.map(\.maxResponseBytes) == [10, 10, 1 << 20], "the limit travels with the request")
    }

    @Test func queryParametersArePercentEncoded() {
        #expect(URLQuery.encode([("filter", #"{"id":{"_in":[1,2]}}"#), ("fields", "id,title")])
            == "filter=%7B%22id%22%3A%7B%22_in%22%3A%5B1%2C2%5D%7D%7D&fields=id%2Ctitle")
        #expect(URLQuery.escape("a b~c") == "a%20b~c")
    }
}

@Suite struct AuthSessionTests {
    @Test func loginThenRefreshRotatesAndKeepsTheNewestRefreshToken() async throws {
        let transport = ScriptedTransport([
            ScriptedTransport.tokens(access: "a1", refresh: "r1", expires: 8000),
            ScriptedTransport.tokens(access: "a2", refresh: "r2", expires: 8000),
            ScriptedTransport.tokens(access: "a3", refresh: "r3", expires: 8000),
        ])
        let client = DirectusClient(baseURL: "http://d", transport: transport, timeout: .seconds(1))
        let session = AuthSession(
            credentials: .login(email: "e@x", password: "pw", otp: nil), client: client, logger: .silent)
        try await session.start()
        #expect(await session.accessToken() == "a1")
        #expect(session.tokenBox.current.token == "a1")
        let deadline = try #require(await session.renewalDeadline())
        #expect(deadline - ContinuousClock.now <= .milliseconds(6000))
        try await session.renew(replacing: "a1")
        #expect(await session.accessToken() == "a2")
        // A caller holding the old token does not refresh again.
        try await session.renew(replacing: "a1")
        #expect(transport.requests.count == 2)
        try await session.renew(replacing: "a2")
        let bodies = transport.requests.map { String(decoding: $0.body ?? [], as: UTF8.self) }
        #expect(bodies[1].contains(#""refresh_token":"r1""#))
        #expect(bodies[2].contains(#""refresh_token":"r2""#))
        #expect(session.tokenBox.current.version == 3)
    }

    @Test func aRefusedRefreshTokenLeadsToAFreshLogin() async throws {
        let refused = ScriptedTransport.json(
            401, #"{"errors":[{"message":"Invalid user credentials.","extensions":{"code":"INVALID_CREDENTIALS"}}]}"#)
        let transport = ScriptedTransport([
            ScriptedTransport.tokens(access: "a1", refresh: "r1"), refused,
            ScriptedTransport.tokens(access: "a2", refresh: "r2"),
        ])
        let client = DirectusClient(baseURL: "http://d", transport: transport, timeout: .seconds(1))
        let session = AuthSession(
            credentials: .login(email: "e@x", password: "pw", otp: "123456"), client: client, logger: .silent)
        try await session.start()
        try await session.renew(replacing: "a1")
        #expect(await session.accessToken() == "a2")
        #expect(transport.requests.map(\.url) == ["http://d/auth/login", "http://d/auth/refresh", "http://d/auth/login"])
        #expect(String(decoding: transport.requests[0].body ?? [], as: UTF8.self).contains(#""otp":"123456""#))
    }

    @Test func aRejectedStaticTokenIsReportedAsCredentialsRejected() async {
        let transport = ScriptedTransport([ScriptedTransport.json(
            401, #"{"errors":[{"message":"Invalid user credentials.","extensions":{"code":"INVALID_CREDENTIALS"}}]}"#)])
        let client = DirectusClient(baseURL: "http://d", transport: transport, timeout: .seconds(1))
        let session = AuthSession(credentials: .staticToken("s"), client: client, logger: .silent)
        await #expect {
            try await session.start()
        } throws: { error in
            (error as? DirectusError)?.isCredentialsRejected == true
        }
        #expect(await session.renewalDeadline() == nil)
    }

    @Test func renewingAStaticTokenAsksDirectusWhetherItStillAcceptsIt() async throws {
        let transport = ScriptedTransport([
            ScriptedTransport.json(200, #"{"data":{"id":"u1"}}"#),
            ScriptedTransport.json(
                401, #"{"errors":[{"message":"Invalid user credentials.","extensions":{"code":"INVALID_CREDENTIALS"}}]}"#),
        ])
        let client = DirectusClient(baseURL: "http://d", transport: transport, timeout: .seconds(1))
        let session = AuthSession(credentials: .staticToken("s"), client: client, logger: .silent)
        #expect(try await session.renew(replacing: "s") == "s")
        // A removed token or a suspended user: refused like a changed password (README.md "Credentials that stop
        // working").
        await #expect {
            try await session.renew(replacing: "s")
        } throws: { error in
            (error as? DirectusError)?.isCredentialsRejected == true
        }
        #expect(transport.requests.map(\.url) == ["http://d/users/me?fields=id", "http://d/users/me?fields=id"])
    }

    @Test func aRESTCallRefusedForTheCredentialsAsksTheRefresherToCheckThem() async throws {
        let transport = ScriptedTransport([
            ScriptedTransport.json(
                401, #"{"errors":[{"message":"Invalid user credentials.","extensions":{"code":"INVALID_CREDENTIALS"}}]}"#),
            ScriptedTransport.json(403, #"{"errors":[{"message":"No.","extensions":{"code":"FORBIDDEN"}}]}"#),
        ])
        let client = DirectusClient(baseURL: "http://d", transport: transport, timeout: .seconds(1))
        let auth = AuthSession(credentials: .staticToken("s"), client: client, logger: .silent)
        let api = DirectusAPI(client: client, auth: auth)
        await #expect(throws: DirectusError.self) { try await api.get("/activity") }
        #expect(auth.tokenBox.takeRenewalRequest())
        // A permission problem on one collection says nothing about the credentials.
        await #expect(throws: DirectusError.self) { try await api.get("/items/secrets") }
        #expect(!auth.tokenBox.takeRenewalRequest())
    }
}

@Suite struct SubscriptionPlannerTests {
    @Test func theSubscribeMessagePassesTheQueryThroughWithoutAnEvent() throws {
        let config = try #require(
            try? ConfigFixture.subscription(
                "collection: articles\nuid: a1\nevents: [create]\nquery:\n  fields: [id, title]\n  filter: {status: {_eq: published}}"))
        #expect(SubscriptionPlanner.subscribeMessage(for: config)
            == #"{"type":"subscribe","collection":"articles","uid":"a1","query":{"fields":["id","title"],"filter":{"status":{"_eq":"published"}}}}"#)
        #expect(SubscriptionPlanner.events(of: config) == [.create])
    }
}
