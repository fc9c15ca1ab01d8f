import BridgeConfig
import BridgeCore
import BridgeEvents
import BridgeDirectus
import BridgeActivity
import BridgeSinks
import Testing

@Suite struct DerivedValueTests {
    func directus(_ url: String, path: String? = nil) throws -> DirectusConfig {
        var yaml = minimalYAML.replacingOnce("http://127.0.0.1:8055", with: url)
        if let path { yaml = yaml.replacingOnce("  auth:\n", with: "  websocket_path: \(path)\n  auth:\n") }
        return try config(yaml).directus
    }

    @Test(arguments: [
        ("http://127.0.0.1:8055", "ws://127.0.0.1:8055/websocket", "http://127.0.0.1:8055", "/websocket"),
        ("https://host", "wss://host/websocket", "https://host", "/websocket"),
        ("https://host/", "wss://host/websocket", "https://host", "/websocket"),
        ("https://host/cms", "wss://host/cms/websocket", "https://host/cms", "/cms/websocket"),
        ("https://host/cms/", "wss://host/cms/websocket", "https://host/cms", "/cms/websocket"),
        ("HTTP://[::1]:8055/a/b", "ws://[::1]:8055/a/b/websocket", "http://[::1]:8055/a/b", "/a/b/websocket"),
    ])
    func websocketURLIsDerived(url: String, websocket: String, rest: String, requestPath: String) throws {
        let config = try directus(url)
        #expect(config.websocketURL == websocket)
        #expect(config.restBaseURL == rest)
        #expect(config.websocketRequestPath == requestPath)
    }

    @Test func customWebsocketPathIsAppended() throws {
        #expect(try directus("https://host/cms", path: "/realtime").websocketURL == "wss://host/cms/realtime")
    }

    @Test func urlPartsAreExposed() throws {
        let url = try directus("https://[::1]/cms").url
        #expect(url.isTLS)
        #expect(url.host == "::1")
        #expect(url.port == nil)
        #expect(url.effectivePort == 443)
        #expect(url.authority == "[::1]")
        #expect(try directus("http://h:8080").url.effectivePort == 8080)
    }

    @Test func sinkFiltersAccept() {
        let all = SinkConfig(type: "ndjson", settings: NDJSONSinkConfig())
        #expect(all.accepts(collection: "x", event: .snapshot))
        let some = SinkConfig(type: "ndjson", settings: NDJSONSinkConfig(), collections: ["a"], events: [.create])
        #expect(some.accepts(collection: "a", event: .create))
        #expect(!some.accepts(collection: "a", event: .update))
        #expect(!some.accepts(collection: "b", event: .create))
    }

    static let secretYAML = """
        directus:
          url: http://127.0.0.1:8055
          auth:
            email: bot@example.com
            password: pass-word-1
            otp: "654321"
        subscriptions:
          - collection: articles
        sinks:
          - type: webhook
            url: https://hooks.example.com/in
            secret: [whsec_c2VjcmV0LWtleQ==, raw-rotated-secret]
            headers:
              Authorization: Bearer hook-bearer-token
              X-Api-Key: api-key-value
              X-Session-Id: session-value
              X-Source: visible-value

        """

    @Test func allSecretsListsEveryCredential() throws {
        let config = try config(Self.secretYAML)
        #expect(
            config.allSecrets == [
                "pass-word-1", "654321", "whsec_c2VjcmV0LWtleQ==", "c2VjcmV0LWtleQ==", "raw-rotated-secret",
                "Bearer hook-bearer-token", "hook-bearer-token", "api-key-value", "session-value",
            ]
        )
    }

    @Test func tokenIsASecret() throws {
        #expect(try config(minimalYAML).allSecrets == ["secret-token"])
    }

    @Test func descriptionNeverShowsSecrets() throws {
        let config = try config(Self.secretYAML)
        let dump = config.description
        for secret in config.allSecrets { #expect(!dump.contains(secret), "\(secret) leaked") }
        #expect(dump.contains("visible-value"))
        #expect(dump.contains("bot@example.com"))
        #expect(dump.contains("password: \"[REDACTED]\""))
        #expect(dump.contains("secret: [\"[REDACTED]\", \"[REDACTED]\"]"))
    }

    @Test func descriptionIsTheEffectiveConfigAndParsesBack() throws {
        let original = try config(
            ExampleConfigTests.everyKey,
            files: InMemoryFiles(["/etc/ca.pem": "-----BEGIN CERTIFICATE-----"])
        )
        let dump = original.description
        #expect(dump.contains("  heartbeat: 1m30s"))
        #expect(dump.contains("  websocket_path: \"/ws\"  # wss://cms.example.com/cms/ws"))
        // The dump is valid configuration YAML: only the secrets differ.
        let reparsed = try config(dump, files: InMemoryFiles(["/etc/ca.pem": "-----BEGIN CERTIFICATE-----"]))
        #expect(reparsed.subscriptions == original.subscriptions)
        #expect(reparsed.delivery == original.delivery)
        #expect(reparsed.http == original.http)
        #expect(reparsed.log == original.log)
        #expect(reparsed.directus.reconnect == original.directus.reconnect)
        #expect(reparsed.directus.websocketURL == original.directus.websocketURL)
        #expect(reparsed.allSecrets.allSatisfy { $0.contains("[REDACTED]") })
    }

    /// Found by the `config` fuzzer: the dump wrote `$` as is, but `$$` in bridge.yaml is a literal `$`, so reading
    /// the dump back halved every run of dollars, and a literal `${HOME}` (written `$${HOME}`) came back as the
    /// environment's HOME.
    @Test func dollarsInValuesSurviveTheDump() throws {
        let yaml = """
            directus:
              url: http://127.0.0.1:8055
              auth:
                token: secret-token
            subscriptions:
              - collection: price$$$$list
                query: {filter: {title: {_eq: "$${HOME}"}, owner: {_eq: "$CURRENT_USER"}}}
            delivery:
              state_dir: ./state$$1
            sinks:
              - type: ndjson
                path: ./out$${HOME}.ndjson

            """
        let original = try config(yaml, environment: ["HOME": "/root"])
        #expect(original.subscriptions[0].collection == "price$$list")
        #expect(original.delivery.stateDir == "./state$1")
        let reparsed = try config(original.description, environment: ["HOME": "/root"])
        #expect(reparsed.subscriptions == original.subscriptions)
        #expect(reparsed.delivery == original.delivery)
        #expect(reparsed.description == original.description)
    }
}
