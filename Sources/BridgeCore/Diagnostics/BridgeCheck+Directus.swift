import BridgeSystem
package import BridgeConfig
internal import BridgeHTTP
internal import BridgeJSON
package import BridgeEvents
internal import BridgeDirectus
internal import BridgeActivity
internal import BridgeSinks

// MARK: - Server, credentials, /server/info, collections

extension BridgeCheck {
    /// `GET /server/ping` answers `pong` (§8.6).
    package func checkServer() async -> CheckResult {
        let shown = config.directus.url.shown
        let start = ContinuousClock.now
        do {
            let response = try await transport.send(
                HTTPRequest(
                    method: "GET", url: config.directus.restBaseURL + "/server/ping",
                    timeout: config.directus.requestTimeout)
            )
            let elapsed = ServerInfoAssessment.text(ContinuousClock.now - start)
            guard response.isSuccess else {
                return .fail(
                    "server",
                    "\(shown): GET /server/ping answered HTTP \(response.status)",
                    remedy: "check directus.url (including any path prefix) and that it points at Directus"
                )
            }
            let body = response.bodyText.trimmingWhitespace
            guard body == "pong" || body == "\"pong\"" else {
                return .fail(
                    "server",
                    "\(shown): GET /server/ping answered \"\(PeerText.prefix(body, maximumLength: 60))\", not pong",
                    remedy: "check that directus.url points at Directus, not at another service or a login page"
                )
            }
            return .ok("server", "\(shown) answers GET /server/ping (\(elapsed))")
        } catch {
            return .fail(
                "server",
                "\(shown): \(error)",
                remedy: "check directus.url, that Directus is running and that this host can reach it"
            )
        }
    }

    /// Logs in (email/password), or reads `/users/me` with the static token; public access has nothing to check.
    package func checkCredentials() async -> (CheckResult, CheckSession?) {
        switch config.directus.auth.credentials {
        case .none:
            let session = CheckSession(api: makeAPI(token: nil), isUser: false, refreshToken: nil)
            return (.ok("credentials", "none configured: public access (auth mode public)"), session)
        case .token(let token):
            do {
                let me = try await client.request("GET", "/users/me", query: [("fields", "email")], token: token)
                let who = me["data"]?["email"]?.stringValue.map { "of \($0) " } ?? ""
                let session = CheckSession(api: makeAPI(token: token), isUser: true, refreshToken: nil)
                return (.ok("credentials", "static token \(who)accepted (it does not expire)"), session)
            } catch {
                return (credentialsFailure(error, what: "the static token"), nil)
            }
        case .login(let email, let password, let otp):
            do {
                let tokens = try await client.login(email: email, password: password, otp: otp)
                learnSecret(tokens.accessToken)
                if let refresh = tokens.refreshToken { learnSecret(refresh) }
                let session = CheckSession(
                    api: makeAPI(token: tokens.accessToken),
                    isUser: true,
                    refreshToken: tokens.refreshToken
                )
                return (.ok("credentials", "logged in as \(email); \(ttlText(tokens.expiresIn))"), session)
            } catch {
                return (credentialsFailure(error, what: "the login of \(email)"), nil)
            }
        }
    }

    private func ttlText(_ ttl: Duration?) -> String {
        guard let ttl else { return "the access token does not expire" }
        return "access token TTL \(ServerInfoAssessment.text(ttl)), renewed over REST at 75 % of it"
    }

    private func credentialsFailure(_ error: DirectusError, what: String) -> CheckResult {
        if error.isCredentialsRejected || error.isTokenExpired {
            let remedy =
                switch config.directus.auth.credentials {
                case .token: "check directus.auth.token (the user's static token in Directus, or DIRECTUS_TOKEN)"
                case .login where error.code == "INVALID_OTP": "set directus.auth.otp to the current one-time password"
                default: "check directus.auth.email and password (or the variables they come from)"
                }
            return .fail(
                "credentials",
                "Directus rejected \(what) (\(error.code ?? "HTTP \(error.status ?? 0)"))",
                remedy: remedy
            )
        }
        return .fail(
            "credentials",
            "\(what) could not be checked: \(error)",
            remedy: error.isRetriable
                ? "Directus is unhealthy; try again" : "see the error; it is not a password problem"
        )
    }

    /// `GET /server/info` with the token: version, WebSockets, socket auth mode, heartbeat.
    package func checkServerInfo(_ session: CheckSession) async -> [CheckResult] {
        do {
            let info = try await session.api.get("/server/info")
            return ServerInfoAssessment.assess(info["data"] ?? .null, asUser: session.isUser, config: config.directus)
        } catch {
            return [
                .fail(
                    "websocket",
                    "GET /server/info failed: \(error)",
                    remedy: "the bridge needs /server/info only for this check; see the error"
                )
            ]
        }
    }

    /// `GET /items/<collection>?limit=1&fields=…&filter=…` with the subscription's query: the same permission and
    /// field checks Directus makes when the bridge subscribes, plus the primary key the bridge needs. `readable` is
    /// false when Directus refuses the read (no such collection, or no permission): nothing else about the
    /// collection is worth checking then.
    package func checkCollection(_ subscription: SubscriptionConfig, session: CheckSession) async -> (
        result: CheckResult, readable: Bool
    ) {
        let collection = subscription.collection
        let name =
            subscription.uid == collection
            ? "collection \(collection)" : "collection \(collection) (\(subscription.uid))"
        let fields = Self.fieldsParameter(subscription.query)
        var query: [(String, String)] = [("limit", "1"), ("fields", fields)]
        if let filter = subscription.query?["filter"] { query.append(("filter", filter.jsonText)) }
        do {
            _ = try await session.api.get("/items/\(URLQuery.escape(collection))", query: query)
        } catch where error.isForbidden {
            if let misspelt = await misspeltCollection(collection, check: name, session: session) {
                return (misspelt, false)
            }
            let remedy =
                "give the bridge's role read permission on \(collection) and the fields \(fields), or fix the "
                + "subscription's collection and query.fields"
            return (.fail(name, "not readable: \(error.message)", remedy: remedy), false)
        } catch {
            let remedy = error.isRetriable ? "Directus is unhealthy; try again" : "fix the subscription's query"
            return (.fail(name, "reading it failed: \(error)", remedy: remedy), true)
        }
        do {
            let key = try await session.api.primaryKey(of: collection)
            return (.ok(name, "readable with fields \(fields); primary key \(key)"), true)
        } catch {
            let detail = "readable with fields \(fields), but its schema is not (\(error.message))"
            let remedy = "let the bridge's role read the collection's fields, or it assumes the primary key is \"id\""
            return (.warning(name, detail, remedy: remedy), true)
        }
    }

    /// A FAIL saying the collection does not exist, when `GET /collections` does not list it but lists one whose name
    /// is a plausible typo of it (`Suggestion`); nil otherwise. Directus answers 403 alike for a collection that is
    /// not there and one the role may not read (directus-protocol.md §8.7), and lists to a role only what it may
    /// read (to an admin, everything): without a near name the 403 stays ambiguous and is reported as it is.
    private func misspeltCollection(_ collection: String, check: String, session: CheckSession) async -> CheckResult? {
        guard let names = try? await session.api.collectionNames(), !names.contains(collection),
            let suggestion = Suggestion.closest(to: collection, in: names)
        else { return nil }
        return .fail(
            check,
            "does not exist (did you mean \"\(suggestion)\"?)",
            remedy: "fix the subscription's collection; should \"\(collection)\" exist, the bridge's role may not read "
                + "it (Directus lists a collection only to roles that may): give the role read permission on it"
        )
    }

    /// `query.fields` as Directus's `fields` parameter: a list joined with commas, a string as is, else `*`.
    package static func fieldsParameter(_ query: QueryValue?) -> String {
        switch query?["fields"] {
        case .array(let items):
            let names = items.compactMap { item -> String? in
                if case .string(let name) = item { return name }
                return nil
            }
            return names.isEmpty ? "*" : names.joined(separator: ",")
        case .string(let text): return text.isEmpty ? "*" : text
        default: return "*"
        }
    }

    private func makeAPI(token: String?) -> DirectusAPI {
        let credentials: AuthSession.Credentials = token.map { .staticToken($0) } ?? .anonymous
        return DirectusAPI(client: client, auth: AuthSession(credentials: credentials, client: client, logger: logger))
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and line breaks.
    fileprivate var trimmingWhitespace: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }
        return String(drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}
