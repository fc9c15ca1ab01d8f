public import BridgeHTTP
public import BridgeJSON
package import BridgeSystem
internal import BridgeEvents

/// The Directus REST calls the bridge makes, without token management (see `DirectusAPI` for that).
///
/// Every answer is read as JSON; error envelopes become `DirectusError` with the server's code
/// (docs/directus-protocol.md §8.1). Tokens go in the `Authorization` header only, never in a URL that could reach a
/// log line.
public final class DirectusClient: Sendable {
    /// The REST base URL without a trailing slash (`https://host/cms`).
    public let baseURL: String
    private let transport: any HTTPTransport
    private let timeout: Duration

    /// Creates a client for `baseURL` over `transport`; each request may take `timeout`.
    public init(baseURL: String, transport: any HTTPTransport, timeout: Duration) {
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        self.baseURL = base
        self.transport = transport
        self.timeout = timeout
    }

    /// Sends a request and returns the parsed JSON body (`.null` for an empty 2xx body).
    public func request(
        _ method: String, _ path: String, query: [(String, String)] = [], body: JSONValue? = nil,
        token: String? = nil
    ) async throws(DirectusError) -> JSONValue {
        try await exchange(method, path, query: query, body: body, token: token).json
    }

    /// Sends a request and returns the answer, validated in place (its tree only when asked for). An answer longer than
    /// `maxResponseBytes` (nil: the transport's limit), or refused by `AnswerMeterCheck` as it arrived (too many
    /// values, too deep, more items than the query's `limit`), throws `DirectusError.Kind.tooLarge`.
    public func exchange(
        _ method: String, _ path: String, query: [(String, String)] = [], body: JSONValue? = nil,
        token: String? = nil, maxResponseBytes: Int? = nil
    ) async throws(DirectusError) -> DirectusAnswer {
        let operation = "\(method) \(path)"
        var url = baseURL + path
        if !query.isEmpty { url += "?" + URLQuery.encode(query) }
        var headers: [(name: String, value: String)] = [("accept", "application/json")]
        if let token { headers.append(("authorization", "Bearer \(token)")) }
        var bytes: [UInt8]?
        if let body {
            headers.append(("content-type", "application/json"))
            bytes = body.serialized()
        }
        let response: HTTPResponse
        do {
            response = try await transport.send(
                HTTPRequest(
                    method: method, url: url, headers: headers, body: bytes, timeout: timeout,
                    maxResponseBytes: maxResponseBytes, makeBodyCheck: { AnswerMeterCheck(query: query) }))
        } catch let error as HTTPClientError where error.kind == .tooLarge {
            throw DirectusError(kind: .tooLarge, message: error.description, operation: operation)
        } catch let error as HTTPClientError {
            var failure = DirectusError(kind: .transport, message: error.description, operation: operation)
            failure.transportRetriable = error.isRetriable
            failure.isTLSFailure = error.kind == .tls
            throw failure
        } catch {
            throw DirectusError(kind: .transport, message: "\(error)", operation: operation)
        }
        return try Self.decode(response, operation: operation)
    }

    /// Turns a response into a validated answer or a `DirectusError`. A 2xx body is checked by the scanner, never
    /// built into a tree here: a page's rows are read in place (`DirectusAnswer.data`).
    package static func decode(_ response: HTTPResponse, operation: String) throws(DirectusError) -> DirectusAnswer {
        if response.bodyTruncated {
            // Only the first bytes were kept: never parsed, and never mistaken for a broken answer worth retrying.
            throw DirectusError(
                kind: .tooLarge, status: response.status,
                message: "the answer is longer than \(response.body.count) bytes", operation: operation)
        }
        guard response.isSuccess else {
            let parsed = try? JSONValue.parse(response.body)  // an error envelope, within the meter's bounds
            // §8.1: {"errors":[{"message":"…","extensions":{"code":"…"}}]}
            let first = parsed?["errors"]?[0]
            let code = first?["extensions"]?["code"]?.stringValue
            let message = first?["message"]?.stringValue ?? Self.snippet(response.body)
            throw DirectusError(
                kind: .rejected, status: response.status, code: code, message: message, operation: operation)
        }
        if response.body.isEmpty {
            return DirectusAnswer(body: Array("null".utf8), root: JSONRange(start: 0, end: 4, kind: .null), bytes: 0)
        }
        guard let root = try? JSONScanner.validate(response.body) else {
            throw DirectusError(
                kind: .invalidResponse, status: response.status,
                message: "the answer is not JSON: \(Self.snippet(response.body))", operation: operation)
        }
        return DirectusAnswer(body: response.body, root: root, bytes: response.body.count)
    }

    /// The first 200 bytes of `body` as text (not the first 200 characters: one character may be megabytes long).
    private static func snippet(_ body: [UInt8]) -> String {
        let text = PeerText.prefix(String(decoding: body.prefix(256), as: UTF8.self), maximumLength: 200)
        return text.isEmpty ? "(empty body)" : text
    }

    // MARK: - Authentication (§8.3–§8.5)

    /// `POST /auth/login` in JSON mode.
    public func login(email: String, password: String, otp: String?) async throws(DirectusError) -> AuthTokens {
        var body: JSONObject = ["email": .string(email), "password": .string(password), "mode": "json"]
        if let otp, !otp.isEmpty { body["otp"] = .string(otp) }
        let answer = try await request("POST", "/auth/login", body: .object(body))
        return try AuthTokens(answer, operation: "POST /auth/login")
    }

    /// `POST /auth/refresh` in JSON mode; the refresh token rotates (keep the new one).
    public func refresh(refreshToken: String) async throws(DirectusError) -> AuthTokens {
        let body: JSONObject = ["refresh_token": .string(refreshToken), "mode": "json"]
        let answer = try await request("POST", "/auth/refresh", body: .object(body))
        return try AuthTokens(answer, operation: "POST /auth/refresh")
    }

    /// `POST /auth/logout` (best effort at shutdown).
    public func logout(refreshToken: String) async {
        let body: JSONObject = ["refresh_token": .string(refreshToken), "mode": "json"]
        _ = try? await request("POST", "/auth/logout", body: .object(body))
    }
}

/// A validated answer, read in place: its body, where its JSON value sits, and its size (for callers that size their
/// requests by what answers weigh). Pages are read through `data` without a tree; `json` builds one on demand.
public struct DirectusAnswer: Sendable {
    /// The body (`null` for an empty one).
    public var body: [UInt8]
    /// The body's JSON value, validated.
    public var root: JSONRange
    /// The body's length in bytes (0 for an empty one).
    public var bytes: Int

    /// The body as a tree, built at each call: for small answers (schema, permissions, tokens), not for pages.
    public var json: JSONValue { (try? JSONValue.parse(root, in: body)) ?? .null }

    /// The elements of the answer's `data` array, as ranges of `body` (empty when `data` is absent or no array).
    public var data: [JSONRange] {
        body.withUnsafeBytes { buffer in root.member("data", in: buffer)?.elements(in: buffer) ?? [] }
    }
}

/// The tokens of a login or refresh (`expires` is milliseconds, §13.19).
public struct AuthTokens: Sendable, Equatable {
    /// The access token (JWT).
    public var accessToken: String
    /// The refresh token (rotates on every refresh).
    public var refreshToken: String?
    /// The access token's lifetime.
    public var expiresIn: Duration?

    /// Creates tokens.
    public init(accessToken: String, refreshToken: String?, expiresIn: Duration?) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
    }

    package init(_ answer: JSONValue, operation: String) throws(DirectusError) {
        guard let access = answer["data"]?["access_token"]?.stringValue else {
            throw DirectusError(kind: .invalidResponse, message: "no data.access_token in the answer", operation: operation)
        }
        let refresh = answer["data"]?["refresh_token"]?.stringValue
        // Both go into headers (`Authorization`) or bodies: one with a line break or NUL is an answer the bridge
        // cannot use (`invalidResponse`: retried), never a header it sends.
        for (name, token) in [("access_token", access), ("refresh_token", refresh ?? "")]
        where OneLine.isBroken(token) {
            throw DirectusError(
                kind: .invalidResponse, message: "data.\(name) in the answer holds a line break or NUL",
                operation: operation)
        }
        accessToken = access
        refreshToken = refresh
        expiresIn = Self.plannedLifetime(expires: answer["data"]?["expires"])
    }

    /// The shortest lifetime planned with (docs/RELIABILITY.md): a server that says 0 or less
    /// must not make the bridge refresh in a tight loop.
    package static let shortestLifetime = Duration.seconds(5)
    /// The longest lifetime planned with (366 days): a longer one is renewed as if it were this long, which keeps
    /// every deadline computed from it far from overflowing.
    package static let longestLifetime = Duration.seconds(366 * 86_400)

    /// The lifetime to plan renewals with, from the `expires` of a login or refresh answer (milliseconds): nil
    /// when absent or null (the token never expires), otherwise clamped to `shortestLifetime…longestLifetime`.
    /// Anything but a number (a string, an object) is planned as the shortest lifetime.
    package static func plannedLifetime(expires: JSONValue?) -> Duration? {
        guard let expires, !expires.isNull else { return nil }
        let milliseconds = expires.doubleValue ?? 0
        let shortest = Double(shortestLifetime.components.seconds) * 1000
        let longest = Double(longestLifetime.components.seconds) * 1000
        // NaN compares false both ways and ends up shortest; ±infinity is clamped like any other number.
        guard milliseconds > shortest else { return shortestLifetime }
        return .milliseconds(Int64(min(milliseconds, longest).rounded(.down)))
    }
}

/// Percent-encoding of URL query parameters (RFC 3986 unreserved characters stay as they are).
public enum URLQuery {
    /// `a=1&b=x%20y`.
    public static func encode(_ parameters: [(String, String)]) -> String {
        parameters.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }

    /// Percent-encodes everything but `A–Z a–z 0–9 - . _ ~`.
    public static func escape(_ text: String) -> String {
        PercentEncoding.encode(text, keeping: PercentEncoding.isUnreserved)
    }
}
