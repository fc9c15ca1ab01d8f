import BridgeConfig
import BridgeCore
import BridgeEvents
import BridgeDirectus
import BridgeActivity
import BridgeSinks
import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

@Suite struct ExampleConfigTests {
    static let examplePath = TestEnvironment.repositoryRoot.appendingPathComponent("bridge.yaml").path

    @Test func repositoryExampleParses() throws {
        let result = ConfigLoader.load(
            path: Self.examplePath,
            environment: ["DIRECTUS_TOKEN": "example-token"],
            sinkTypes: SinkCatalog.configTypes,
            files: LocalFileSystem()
        )
        let config = try result.get()
        #expect(config.directus.url.description == "http://127.0.0.1:8055")
        #expect(config.directus.auth == AuthConfig(credentials: .token("example-token"), mode: .handshake))
        #expect(config.subscriptions.map(\.uid) == ["articles", "comments"])
        #expect(config.subscriptions[0].query?.jsonText == #"{"fields":["*"],"filter":{"status":{"_eq":"published"}}}"#)
        #expect(config.sinks == [SinkConfig(type: "ndjson", settings: NDJSONSinkConfig(), name: "stdout")])
        #expect(config.warnings.isEmpty, "the example names its sink")
        #expect(config.http.listen == nil)
    }

    @Test func repositoryExampleReportsTheMissingTokenAtItsReference() throws {
        let result = ConfigLoader.load(
            path: Self.examplePath, environment: [:], sinkTypes: SinkCatalog.configTypes, files: LocalFileSystem())
        let error = try #require(result.failure)
        let text = try String(contentsOfFile: Self.examplePath, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let line = try #require(lines.firstIndex { $0.contains("token: ${DIRECTUS_TOKEN}") })
        let column = try #require(lines[line].firstRange(of: "${")).lowerBound.utf16Offset(in: lines[line]) + 1
        #expect(
            error.issues.map(\.description) == [
                "\(Self.examplePath):\(line + 1):\(column): undefined variable \"DIRECTUS_TOKEN\" (set it in the "
                    + "environment, or give a default: ${DIRECTUS_TOKEN:-default})"
            ]
        )
    }

    static let everyKey = """
        directus:
          url: https://cms.example.com/cms/
          websocket_path: /ws
          auth:
            email: bot@example.com
            password: hunter22
            otp: "123456"
            mode: strict
          tls:
            ca_file: /etc/ca.pem
            insecure_skip_verify: true
          connect_timeout: 3s
          request_timeout: 1m
          heartbeat: 1m30s
          reconnect:
            initial_delay: 250ms
            max_delay: 2m
            reset_after: 1h
        subscriptions:
          - collection: articles
            uid: art
            events: [update, create]
            query:
              fields: [id, title]
              limit: 50
            snapshot: true
        delivery:
          mode: activity
          poll_interval: 2s
          state_dir: /var/lib/bridge
          max_queue: 500
          max_queue_bytes: 64MiB
        sinks:
          - type: ndjson
            path: /var/log/changes.ndjson
            fsync: always
            collections: [articles]
            events: [snapshot]
          - type: webhook
            url: https://hooks.example.com/in?source=bridge
            secret: [whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw, old-raw-secret]
            headers:
              X-Source: directus-bridge
              Authorization: Bearer hook-token
            timeout: 5s
            max_attempts: 3
            max_in_flight: 4
            retry_schedule: [1s, 10s]
            collections: [articles]
            events: [delete]
        http:
          listen: "[::1]:9464"
        log:
          level: debug
          format: json
        shutdown_timeout: 30s

        """

    @Test func everyKeyIsRead() throws {
        let files = InMemoryFiles(["/etc/ca.pem": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"])
        let config = try config(Self.everyKey, files: files)
        let expected = BridgeConfig(
            directus: DirectusConfig(
                url: HTTPURL("https://cms.example.com/cms/")!,
                websocketPath: "/ws",
                auth: AuthConfig(
                    credentials: .login(email: "bot@example.com", password: "hunter22", otp: "123456"),
                    mode: .strict
                ),
                tls: TLSConfig(caFile: "/etc/ca.pem", insecureSkipVerify: true),
                connectTimeout: .seconds(3),
                requestTimeout: .seconds(60),
                heartbeat: .seconds(90),
                reconnect: ReconnectConfig(
                    initialDelay: .milliseconds(250),
                    maxDelay: .seconds(120),
                    resetAfter: .seconds(3600)
                )
            ),
            subscriptions: [
                SubscriptionConfig(
                    collection: "articles",
                    uid: "art",
                    events: [.update, .create],
                    query: .object([("fields", .array([.string("id"), .string("title")])), ("limit", .number("50"))]),
                    snapshot: true
                )
            ],
            delivery: DeliveryConfig(
                mode: .activity,
                pollInterval: .seconds(2),
                stateDir: "/var/lib/bridge",
                maxQueue: 500,
                maxQueueBytes: 64 << 20
            ),
            sinks: [
                SinkConfig(
                    type: "ndjson",
                    settings: NDJSONSinkConfig(path: "/var/log/changes.ndjson", fsync: .always),
                    collections: ["articles"],
                    events: [.snapshot]
                ),
                SinkConfig(
                    type: "webhook",
                    settings: WebhookSinkConfig(
                        url: HTTPURL("https://hooks.example.com/in?source=bridge")!,
                        secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "old-raw-secret"],
                        headers: [
                            HTTPHeader(name: "X-Source", value: "directus-bridge"),
                            HTTPHeader(name: "Authorization", value: "Bearer hook-token"),
                        ],
                        timeout: .seconds(5),
                        maxAttempts: 3,
                        maxInFlight: 4,
                        retrySchedule: [.seconds(1), .seconds(10)],
                        caFile: "/etc/ca.pem"  // directus.tls.ca_file: an in-house CA signs the receivers too
                    ),
                    collections: ["articles"],
                    events: [.delete]
                ),
            ],
            http: HTTPConfig(listen: ListenAddress(host: "::1", port: 9464)),
            log: LogConfig(level: .debug, format: .json),
            shutdownTimeout: .seconds(30)
        )
        #expect(config == expected)
        #expect(config.directus.websocketURL == "wss://cms.example.com/cms/ws")
    }

    @Test func defaultsMatchTheContract() throws {
        let config = try config(minimalYAML)
        let directus = config.directus
        #expect(directus.websocketPath == "/websocket")
        #expect(directus.auth.mode == .handshake)
        #expect(directus.tls == TLSConfig(caFile: nil, insecureSkipVerify: false))
        #expect(directus.connectTimeout == .seconds(10))
        #expect(directus.requestTimeout == .seconds(30))
        #expect(directus.heartbeat == .seconds(25))
        #expect(directus.reconnect.initialDelay == .milliseconds(500))
        #expect(directus.reconnect.maxDelay == .seconds(30))
        #expect(directus.reconnect.resetAfter == .seconds(60))
        #expect(config.subscriptions == [SubscriptionConfig(collection: "articles")])
        #expect(config.subscriptions[0].uid == "articles")
        #expect(config.subscriptions[0].events == [.create, .update, .delete])
        #expect(config.subscriptions[0].query == nil)
        #expect(config.subscriptions[0].snapshot == false)
        #expect(config.delivery.mode == .auto)
        #expect(config.delivery.pollInterval == .seconds(5))
        #expect(config.delivery.stateDir == "./.bridge-state")
        #expect(config.delivery.maxQueue == 100_000)
        #expect(config.sinks == [SinkConfig(type: "ndjson", settings: NDJSONSinkConfig(path: "-", fsync: .interval))])
        #expect(config.http.listen == nil)
        #expect(config.log == LogConfig(level: .info, format: .text))
        #expect(config.shutdownTimeout == .seconds(10))
    }

    @Test func webhookDefaultsMatchTheContract() throws {
        let yaml = minimalYAML.replacingOnce(
            "  - type: ndjson",
            with: "  - type: webhook\n    url: http://127.0.0.1:9/h"
        )
        let config = try config(yaml)
        let webhook = try #require(config.sinks.first?.settings(as: WebhookSinkConfig.self))
        #expect(webhook.signingSecrets == [])
        #expect(webhook.headers == [])
        #expect(webhook.timeout == .seconds(15))
        #expect(webhook.maxAttempts == 12)
        #expect(webhook.maxInFlight == 32)
        #expect(
            webhook.retrySchedule.map(DurationText.format) == [
                "5s", "30s", "2m", "5m", "15m", "30m", "1h", "2h", "4h", "8h", "8h",
            ]
        )
        #expect(webhook.retryDelay(afterAttempt: 1) == .seconds(5))
        #expect(webhook.retryDelay(afterAttempt: 11) == .seconds(28800))
        #expect(webhook.retryDelay(afterAttempt: 40) == .seconds(28800))
    }

    @Test func nullValuesMeanTheDefault() throws {
        let yaml = minimalYAML + "delivery:\n  mode:\n  poll_interval: ~\nhttp:\nlog: null\n"
        let config = try config(yaml)
        #expect(config.delivery == DeliveryConfig())
        #expect(config.http == HTTPConfig())
        #expect(config.log == LogConfig())
    }
}

extension Result {
    /// The failure, or nil on success.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
