public import BridgeJSON
internal import BridgeEvents

/// REST calls with the session's token: renews the token once when Directus says it expired, has the token
/// refresher check the credentials when Directus refuses them, and knows the few schema and permission questions
/// the bridge asks (§8).
public final class DirectusAPI: Sendable {
    /// The underlying client.
    public let client: DirectusClient
    /// The authentication session.
    public let auth: AuthSession
    /// Directus's `QUERY_LIMIT_MAX`, once known: every `limit` sent is held to it.
    public let rowLimit = RowLimit()

    /// Creates the API over `client` with `auth`.
    public init(client: DirectusClient, auth: AuthSession) {
        self.client = client
        self.auth = auth
    }

    /// `GET path?query` with the current token; the answer's full JSON.
    public func get(_ path: String, query: [(String, String)] = []) async throws(DirectusError) -> JSONValue {
        try await call("GET", path, query: query, body: nil)
    }

    /// `GET path?query` whose answer may be at most `maxResponseBytes` long (`DirectusError.Kind.tooLarge`
    /// above), with the answer's size.
    public func get(_ path: String, query: [(String, String)], maxResponseBytes: Int) async throws(DirectusError)
        -> DirectusAnswer
    {
        try await exchange("GET", path, query: query, body: nil, maxResponseBytes: maxResponseBytes)
    }

    /// Any method with the current token.
    public func call(_ method: String, _ path: String, query: [(String, String)] = [], body: JSONValue? = nil)
        async throws(DirectusError) -> JSONValue
    {
        try await exchange(method, path, query: query, body: body, maxResponseBytes: nil).json
    }

    private func exchange(
        _ method: String, _ path: String, query: [(String, String)], body: JSONValue?, maxResponseBytes: Int?
    ) async throws(DirectusError) -> DirectusAnswer {
        do {
            return try await exchangeWithToken(
                method, path, query: rowLimit.apply(to: query), body: body, maxResponseBytes: maxResponseBytes)
        } catch where error.code == "INVALID_QUERY" && rowLimit.learn(refusal: error) != nil {
            // Directus's QUERY_LIMIT_MAX, not known before: asked again within it. The answer may hold fewer rows
            // than the caller asked for; every reader goes on after a short answer that is not empty.
            return try await exchangeWithToken(
                method, path, query: rowLimit.apply(to: query), body: body, maxResponseBytes: maxResponseBytes)
        }
    }

    private func exchangeWithToken(
        _ method: String, _ path: String, query: [(String, String)], body: JSONValue?, maxResponseBytes: Int?
    ) async throws(DirectusError) -> DirectusAnswer {
        let token = await auth.accessToken()
        do {
            do {
                return try await client.exchange(
                    method, path, query: query, body: body, token: token, maxResponseBytes: maxResponseBytes)
            } catch where error.isTokenExpired {
                let renewed = try await auth.renew(replacing: token)
                return try await client.exchange(
                    method, path, query: query, body: body, token: renewed, maxResponseBytes: maxResponseBytes)
            }
        } catch where error.isCredentialsRejected {
            // A static token removed, a suspended user: the token refresher asks again and reports it (error log,
            // /readyz 503) until it works, while an open socket may not notice (README.md "Credentials that stop
            // working").
            auth.tokenBox.requestRenewal()
            throw error
        }
    }

    /// The primary-key field of `collection` from `GET /fields/<collection>` (`schema.is_primary_key`), never
    /// assumed to be `id` (README.md "The event line": `key`).
    public func primaryKey(of collection: String) async throws(DirectusError) -> String {
        let answer = try await get("/fields/\(URLQuery.escape(collection))")
        for field in answer["data"]?.arrayValue ?? [] where field["schema"]?["is_primary_key"]?.boolValue == true {
            if let name = field["field"]?.stringValue { return name }
        }
        throw DirectusError(
            kind: .invalidResponse, message: "no field of \"\(collection)\" is marked as primary key",
            operation: "GET /fields/\(collection)")
    }

    /// The collections `GET /collections` lists to this user: every one to an admin, to anyone else those its role
    /// may read.
    public func collectionNames() async throws(DirectusError) -> [String] {
        let answer = try await get("/collections")
        return (answer["data"]?.arrayValue ?? []).compactMap { $0["collection"]?.stringValue }
    }

    /// The collection's activity tracking (`meta.accountability`: `all`, `activity`, or nil when off).
    public func accountability(of collection: String) async throws(DirectusError) -> String? {
        let answer = try await get("/collections/\(URLQuery.escape(collection))")
        let meta = answer["data"]?["meta"]
        // A collection without meta (created in the database only) is tracked with the default `all`.
        guard let meta, !meta.isNull else { return "all" }
        return meta["accountability"]?.stringValue
    }

    /// The collection's manual-sort field (`meta.sort_field`), nil when it has none (directus-protocol.md §14.3).
    public func sortField(of collection: String) async throws(DirectusError) -> String? {
        let answer = try await get("/collections/\(URLQuery.escape(collection))")
        guard let name = answer["data"]?["meta"]?["sort_field"]?.stringValue, !name.isEmpty else { return nil }
        return name
    }

    /// Whether the user can read every user's activity rows (docs/configuration.md, `delivery`):
    /// `read.access == "full"` on `directus_activity` from `GET /permissions/me` (§8.9), else the admin flag of
    /// `GET /users/me` on servers without that route. A 403 means not readable.
    public func canReadAllActivity() async throws(DirectusError) -> Bool {
        do {
            let answer = try await get("/permissions/me")
            return answer["data"]?["directus_activity"]?["read"]?["access"]?.stringValue == "full"
        } catch where error.status == 404 {
            let me = try await get("/users/me", query: [("fields", "role.admin_access")])
            return me["data"]?["role"]?["admin_access"]?.boolValue == true
        } catch where error.isForbidden {
            return false
        }
    }

    /// The newest activity id (0 when the log is empty).
    public func latestActivityID() async throws(DirectusError) -> Int64 {
        let answer = try await get("/activity", query: [("sort", "-id"), ("limit", "1"), ("fields", "id")])
        return answer["data"]?[0]?["id"]?.int64Value ?? 0
    }

    /// The oldest activity id still in the log (nil when it is empty): rows below it were deleted, by Directus's
    /// retention job (`RETENTION_ENABLED`, `ACTIVITY_RETENTION`) or by hand.
    public func oldestActivityID() async throws(DirectusError) -> Int64? {
        let answer = try await get("/activity", query: [("sort", "id"), ("limit", "1"), ("fields", "id")])
        return answer["data"]?[0]?["id"]?.int64Value
    }
}
