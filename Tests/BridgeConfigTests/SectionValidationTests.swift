import BridgeConfig
import BridgeSystem
import Testing

@Suite struct SectionValidationTests {
    @Test func deliveryChecks() throws {
        let yaml = minimalYAML + "delivery:\n  mode: activty\n  poll_interval: 0ms\n  state_dir: \"\"\n  max_queue: 0\n"
        #expect(
            issues(yaml) == [
                "bridge.yaml:10:9: delivery.mode: unknown value \"activty\" (did you mean \"activity\"? allowed: "
                    + "activity, live, auto)",
                "bridge.yaml:11:18: delivery.poll_interval must be longer than 0",
                "bridge.yaml:12:14: delivery.state_dir must not be empty",
                "bridge.yaml:13:14: delivery.max_queue must be between 1 and 10000000, got 0",
            ]
        )
        let valid = try config(minimalYAML + "delivery: { mode: live, max_queue: 0x10 }\n")
        #expect(valid.delivery.mode == .live)
        #expect(valid.delivery.maxQueue == 16)
        #expect(valid.delivery.maxQueueBytes == 256 << 20, "the default")
    }

    /// Intervals that run a loop have a floor: a typo such as `poll_interval: 5ms` for `5s`, or `1ns`, made the
    /// bridge read the activity log in a tight loop (half a core, and Directus hammered with REST reads), ping
    /// Directus in one (`heartbeat`), write 260,000 stats lines in 8 s (`stats_interval`), or report a JetStream
    /// broker failing ten times a second (`ack_timeout`, republishing meanwhile). `validate` said ok to all of them.
    @Test func intervalsThatRunALoopHaveAFloor() {
        let jetstream = "  - type: jetstream\n    servers: [\"nats://h:4222\"]\n    ack_timeout: 10ms\n"
        let cases: [(String, String)] = [
            (minimalYAML + "delivery:\n  poll_interval: 1ns\n", "delivery.poll_interval must be at least 100ms, got 1ns"),
            (minimalYAML + "delivery:\n  poll_interval: 5ms\n", "delivery.poll_interval must be at least 100ms, got 5ms"),
            (minimalYAML.replacingOnce("  auth:\n", with: "  heartbeat: 25ms\n  auth:\n"),
             "directus.heartbeat must be at least 100ms, got 25ms"),
            (minimalYAML + "log:\n  stats_interval: 1ns\n", "log.stats_interval must be 0s (off) or at least 100ms, got 1ns"),
            (minimalYAML.replacingOnce("  - type: ndjson\n", with: jetstream),
             "sinks[0].ack_timeout must be at least 100ms, got 10ms"),
        ]
        for (yaml, message) in cases {
            let found = issues(yaml)
            #expect(found.count == 1 && found.first?.hasSuffix(message) == true, "\(message): \(found)")
        }
        let floors =
            minimalYAML.replacingOnce("  auth:\n", with: "  heartbeat: 100ms\n  auth:\n")
            + "delivery:\n  poll_interval: 100ms\nlog:\n  stats_interval: 0s\n"
        #expect(issues(floors) == ["<valid>"])
    }

    @Test func maxQueueBytesTakesBytesOrASizeWithAUnit() throws {
        for (text, bytes) in [("2MiB", 2 << 20), ("1GiB", 1 << 30), ("1048576", 1 << 20), ("4096KiB", 4 << 20)] {
            #expect(try config(minimalYAML + "delivery:\n  max_queue_bytes: \(text)\n").delivery.maxQueueBytes == bytes)
        }
        let yaml =
            minimalYAML
            + "delivery:\n  max_queue_bytes: 12XB\n  max_queu_bytes: 1MiB\n"
        #expect(
            issues(yaml) == [
                "bridge.yaml:10:20: delivery.max_queue_bytes: invalid size \"12XB\" (use a whole number of bytes, or a "
                    + "whole number and a unit: B, KiB, MiB, GiB or TiB, e.g. \"256MiB\")",
                "bridge.yaml:11:3: unknown key \"max_queu_bytes\" (did you mean \"max_queue_bytes\"?)",
            ]
        )
        for text in ["512KiB", "0", "-1", "2TiB", "1.5MiB", "\"1048576\"", "99999999999999999999TiB"] {
            let problems = issues(minimalYAML + "delivery:\n  max_queue_bytes: \(text)\n")
            #expect(problems.count == 1, "\(text): \(problems)")
            #expect(problems.first?.contains("delivery.max_queue_bytes") == true)
        }
        #expect(
            issues(minimalYAML + "delivery:\n  max_queue_bytes: 512KiB\n") == [
                "bridge.yaml:10:20: delivery.max_queue_bytes must be between 1MiB and 1TiB, got 512KiB"
            ]
        )
        #expect(ByteSizeText.format(3 << 19) == "1536KiB" && ByteSizeText.format(1000) == "1000B")
    }

    @Test(arguments: [
        ("127.0.0.1:9464", ListenAddress(host: "127.0.0.1", port: 9464)),
        ("\"[::1]:9464\"", ListenAddress(host: "::1", port: 9464)),
        ("localhost:0", ListenAddress(host: "localhost", port: 0)),
        ("0.0.0.0:80", ListenAddress(host: "0.0.0.0", port: 80)),
    ])
    func listenAddressesAreParsed(text: String, expected: ListenAddress) throws {
        #expect(try config(minimalYAML + "http:\n  listen: \(text)\n").http.listen == expected)
    }

    @Test(arguments: [
        ("9464", "has no host (write 127.0.0.1:9464, or 0.0.0.0:9464 for all)"),
        ("\":9464\"", "has no host"),
        ("localhost", "has no port"),
        ("::1:9464", "has an IPv6 address that is not in brackets (write [::1]:9464)"),
        ("\"[::1]\"", "has no port"),
        ("h:http", "has an invalid port \"http\" (allowed: 0…65535)"),
        ("h:70000", "has an invalid port \"70000\" (allowed: 0…65535)"),
    ])
    func badListenAddressesAreReported(text: String, reason: String) {
        let unquoted = text.hasPrefix("\"") ? String(text.dropFirst().dropLast()) : text
        #expect(
            issues(minimalYAML + "http:\n  listen: \(text)\n") == [
                "bridge.yaml:10:11: http.listen must be host:port such as 127.0.0.1:9464 or [::1]:9464; \"\(unquoted)\" "
                    + reason
            ]
        )
    }

    @Test func logChecks() throws {
        #expect(
            try config(minimalYAML + "log: { level: warn, format: json }\n").log
                == LogConfig(level: .warning, format: .json)
        )
        #expect(try config(minimalYAML + "log: { level: trace }\n").log.level == .trace)
        #expect(try config(minimalYAML + "log: { stats_interval: 250ms }\n").log.statsInterval == .milliseconds(250))
        #expect(try config(minimalYAML + "log: { stats_interval: 0s }\n").log.statsInterval == .zero)
        #expect(try config(minimalYAML).log.statsInterval == .seconds(60))
        #expect(
            issues(minimalYAML + "log: { level: verbose, format: xml }\n") == [
                "bridge.yaml:9:15: log.level: unknown value \"verbose\" (allowed: trace, debug, info, warn, error)",
                "bridge.yaml:9:32: log.format: unknown value \"xml\" (allowed: text, json)",
            ]
        )
    }

    @Test func shutdownTimeoutIsADuration() throws {
        #expect(try config(minimalYAML + "shutdown_timeout: 2m\n").shutdownTimeout == .seconds(120))
        #expect(
            issues(minimalYAML + "shutdown_timeout: [1s]\n") == [
                "bridge.yaml:9:19: shutdown_timeout: expected a duration such as \"10s\", got a list"
            ]
        )
    }

    @Test func everyProblemIsReportedAtOnceInFileOrder() {
        let yaml = """
            directus:
              url: ftp://cms
              heartbeat: often
              auth:
                mode: handshake
            subscriptions:
              - colection: articles
              - collection: pages
                events: [create, crate]
            delivery:
              max_queue: -5
            sinks:
              - type: webhook
                url: ${HOOK_URL}
                max_in_flight: 0
            log:
              levle: debug

            """
        #expect(
            issues(yaml) == [
                "bridge.yaml:2:8: directus.url must start with http:// or https://, got \"ftp://cms\"",
                "bridge.yaml:3:14: directus.heartbeat: invalid duration \"often\" (use a number and a unit: ms, s, m or "
                    + "h, e.g. \"250ms\", \"10s\", \"1m30s\")",
                "bridge.yaml:5:11: directus.auth: mode \"handshake\" needs credentials: set token (or token_file), or "
                    + "email and password; for public access set \"mode: public\"",
                "bridge.yaml:7:5: unknown key \"colection\" (did you mean \"collection\"?)",
                "bridge.yaml:9:22: subscriptions[1].events[1]: unknown event \"crate\" (did you mean \"create\"? "
                    + "allowed: create, update, delete)",
                "bridge.yaml:11:14: delivery.max_queue must be between 1 and 10000000, got -5",
                "bridge.yaml:14:10: undefined variable \"HOOK_URL\" (set it in the environment, or give a default: "
                    + "${HOOK_URL:-default})",
                "bridge.yaml:15:20: sinks[0].max_in_flight must be between 1 and 1024, got 0",
                "bridge.yaml:17:3: unknown key \"levle\" (did you mean \"level\"?)",
            ]
        )
    }

    @Test func errorDescriptionIsOneLinePerIssue() throws {
        let error = try #require(parse(minimalYAML + "log: { level: loud }\nshutdown_timeout: 0s\n").failure)
        #expect(
            error.description
                == "bridge.yaml:9:15: log.level: unknown value \"loud\" (allowed: trace, debug, info, warn, error)\n"
                + "bridge.yaml:10:19: shutdown_timeout must be longer than 0"
        )
        #expect(!error.isRetriable)
    }
}
