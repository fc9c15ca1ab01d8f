import BridgeConfig
import Testing

@Suite struct DirectusValidationTests {
    @Test func unknownKeyGetsASuggestion() {
        let yaml = minimalYAML.replacingOnce("  - collection: articles", with: "  - colection: articles")
        // The typo is the one problem: "collection" is not also reported missing.
        #expect(issues(yaml) == ["bridge.yaml:6:5: unknown key \"colection\" (did you mean \"collection\"?)"])
    }

    @Test func unknownKeyWithoutCloseMatchListsTheAllowedKeys() {
        #expect(
            issues(minimalYAML + "log:\n  colour: true\n") == [
                "bridge.yaml:10:3: unknown key \"colour\" in log (allowed: level, format, stats_interval, progress_interval)"
            ]
        )
    }

    @Test func misplacedKeySaysWhereItBelongs() {
        let yaml = minimalYAML.replacingOnce("  auth:\n", with: "  poll_interval: 1s\n  auth:\n")
        #expect(issues(yaml) == ["bridge.yaml:3:3: unknown key \"poll_interval\" (it belongs under \"delivery\")"])
    }

    @Test func camelCaseKeyIsMatchedToItsSnakeCaseName() {
        let yaml = minimalYAML.replacingOnce("  auth:\n", with: "  websocketPath: /ws\n  auth:\n")
        #expect(issues(yaml) == ["bridge.yaml:3:3: unknown key \"websocketPath\" (did you mean \"websocket_path\"?)"])
    }

    @Test func extensionKeysAreAllowedAtTheTopLevelOnly() {
        #expect(issues(minimalYAML + "x-anything: { a: 1 }\n") == ["<valid>"])
        #expect(issues(minimalYAML + "log:\n  x-note: 1\n").first?.contains("unknown key \"x-note\"") == true)
    }

    @Test func missingDirectusAndUrl() {
        #expect(
            issues("subscriptions: [{ collection: a }]\nsinks: [{ type: ndjson }]\n") == [
                "bridge.yaml:1:1: missing required key \"directus\""
            ]
        )
        #expect(
            issues(minimalYAML.replacingOnce("  url: http://127.0.0.1:8055\n", with: "")) == [
                "bridge.yaml:2:3: missing required key \"url\" in directus"
            ]
        )
        #expect(
            issues(minimalYAML.replacingOnce("  url: http://127.0.0.1:8055\n", with: "  url:\n")) == [
                "bridge.yaml:2:3: directus.url needs a value"
            ]
        )
    }

    @Test func urlMustBeHTTP() {
        func urlIssues(_ url: String) -> [String] {
            issues(minimalYAML.replacingOnce("http://127.0.0.1:8055", with: url))
        }
        #expect(
            urlIssues("ws://h/") == [
                "bridge.yaml:2:8: directus.url must be the http:// or https:// URL (the WebSocket URL is derived from it), "
                    + "got \"ws://h:80\""
            ]
        )
        #expect(
            urlIssues("ftp://h") == [
                "bridge.yaml:2:8: directus.url must start with http:// or https://, got \"ftp://h\""
            ]
        )
        #expect(
            urlIssues("127.0.0.1:8055") == [
                "bridge.yaml:2:8: directus.url must be an absolute URL starting with http:// or https://"
            ]
        )
        #expect(urlIssues("http://:8055") == ["bridge.yaml:2:8: directus.url has no host, got \"http://:8055\""])
        #expect(
            urlIssues("http://h:99999") == [
                "bridge.yaml:2:8: directus.url has an invalid port \"99999\" (allowed: 1…65535), got \"http://h:99999\""
            ]
        )
        #expect(
            urlIssues("http://u:p@h") == [
                "bridge.yaml:2:8: directus.url must not contain credentials (user:password@); use directus.auth or headers "
                    + "instead, got \"http://h:80\""
            ]
        )
        #expect(
            urlIssues("http://h/?a=1") == [
                "bridge.yaml:2:8: directus.url must not have a ?query (it is the base URL of the API)"
            ]
        )
        #expect(urlIssues("HTTPS://[::1]:8443/cms") == ["<valid>"])
    }

    @Test func websocketPathMustBeAPath() {
        let yaml = minimalYAML.replacingOnce("  auth:\n", with: "  websocket_path: websocket\n  auth:\n")
        #expect(issues(yaml) == ["bridge.yaml:3:19: directus.websocket_path must start with \"/\", got \"websocket\""])
    }

    @Test func durationsAreChecked() {
        let yaml = minimalYAML.replacingOnce(
            "  auth:\n",
            with: "  heartbeat: 25\n  connect_timeout: 0s\n  request_timeout: -1s\n  auth:\n"
        )
        #expect(
            issues(yaml) == [
                "bridge.yaml:3:14: directus.heartbeat: invalid duration \"25\" (use a number and a unit: ms, s, m or h, "
                    + "e.g. \"250ms\", \"10s\", \"1m30s\")",
                "bridge.yaml:4:20: directus.connect_timeout must be longer than 0",
                "bridge.yaml:5:20: directus.request_timeout: invalid duration \"-1s\" (use a number and a unit: ms, s, "
                    + "m or h, e.g. \"250ms\", \"10s\", \"1m30s\")",
            ]
        )
    }

    @Test func reconnectMaxDelayMustNotBeShorterThanTheInitialDelay() {
        let direct = minimalYAML.replacingOnce(
            "  auth:\n",
            with: "  reconnect: { initial_delay: 5s, max_delay: 1s }\n  auth:\n"
        )
        #expect(
            issues(direct) == [
                "bridge.yaml:3:46: directus.reconnect.max_delay (1s) must not be shorter than initial_delay (5s)"
            ]
        )
    }

    @Test func sectionMustBeAMapping() {
        let yaml = minimalYAML.replacingOnce("  auth:\n", with: "  tls: yes\n  auth:\n")
        #expect(issues(yaml) == ["bridge.yaml:3:8: directus.tls: expected a mapping of keys, got a string"])
    }
}

@Suite struct WrongShapeTests {
    @Test func sectionThatIsNotAMappingIsReportedOnce() {
        let yaml = "directus: http://127.0.0.1:8055\nsubscriptions: [{ collection: a }]\nsinks: [{ type: ndjson }]\n"
        #expect(issues(yaml) == ["bridge.yaml:1:11: directus: expected a mapping of keys, got a string"])
        let auth = minimalYAML.replacingOnce("  auth:\n    token: secret-token\n", with: "  auth: secret-token\n")
        #expect(issues(auth) == ["bridge.yaml:3:9: directus.auth: expected a mapping of keys, got a string"])
    }
}
