package import BridgeConfig
package import BridgeEvents
import BridgeRedis
internal import BridgeSystem

/// `type: redis`: events appended to Redis Streams, delivered when `XADD` answered (`BrokerSink` over
/// `RedisBrokerClient`).
package enum RedisSinkType: SinkType {
    package static var configType: SinkConfigType { RedisSinkConfig.configType }
    /// Its dead letters (events the server refused for good) live in `<state_dir>/webhooks.db`.
    package static var keepsLocalState: Bool { true }

    package static func makeConnector(_ settings: RedisSinkConfig, context: SinkContext) throws(RuntimeOutcome)
        -> any SinkConnector
    {
        let name = settings.summary
        let logger = context.logger.child(label: "redis", metadata: [LogKey.sink: context.sinkID])
        // No answer for two reply timeouts: the pipeline in flight failed and was sent again at least once.
        return try BrokerSink.make(
            name: name,
            context: context,
            maxOutstanding: settings.maxInFlight,
            stallAfter: .seconds(20),
            logger: logger
        ) { () async throws(SinkError) in
            try await RedisBrokerClient.open(settings, sinkName: name)
        }
    }

    /// `check`: the server answers and accepts the credentials, and no stream key of the sink holds another type;
    /// with `--send-test-event`, a test event is appended.
    package static func probe(_ settings: RedisSinkConfig, context: SinkProbeContext) async -> [CheckResult] {
        let check = context.checkName(type: "redis", target: ShownURL.of(settings.url))
        let client: RedisClient
        do {
            client = RedisClient(settings: try settings.clientSettings())
            try await client.ping()
        } catch {
            return [
                .fail(
                    check,
                    "cannot connect: \(RedisBrokerClient.describe(error))",
                    remedy: error.kind == .authentication
                        ? "check the user and password in url against the server's ACL, and ca_file"
                        : "check url and that redis-server runs and is reachable from this host"
                )
            ]
        }
        defer { client.close() }
        let template = EventNameTemplate(text: settings.stream)
        var keys: [String] = []
        for collection in context.scope.collections {
            for event in context.scope.events {
                let key = template.render(collection: collection, event: event.rawValue)
                if !keys.contains(key) { keys.append(key) }
            }
        }
        var commands = RedisCommands()
        for key in keys { commands.command("TYPE", key) }
        if !keys.isEmpty {
            do {
                for (key, reply) in zip(keys, try await client.pipeline(commands)) {
                    guard reply == .status("none") || reply == .status("stream") else {
                        return [
                            .fail(
                                check,
                                "key \(key) holds \(reply.text ?? "something else"), not a stream",
                                remedy: "delete or rename \(key), or change the sink's stream"
                            )
                        ]
                    }
                }
            } catch {
                return [.fail(check, "TYPE failed: \(RedisBrokerClient.describe(error))", remedy: remedy(error))]
            }
        }
        let streams =
            keys.isEmpty ? "no subscribed collection reaches this sink" : "streams \(keys.joined(separator: ", "))"
        guard context.sendTestEvent else { return [.ok(check, "connected; \(streams)")] }
        let test = context.testEvent
        let stream = template.render(collection: context.testCollection, event: "test")
        let entry = RedisStreamEntry(
            stream: stream,
            dedupID: test.id,
            fields: RedisBrokerClient.fields(
                id: test.id, type: SinkTestEvent.type, collection: context.testCollection, key: "", event: "test",
                payload: test.body)
        )
        do {
            let outcome = try await client.append([entry], settings: settings.streamSettings).first
            if case .rejected(let error) = outcome {
                return [.fail(check, "test event refused: \(error)", remedy: "check the type of key \(stream)")]
            }
            return [.ok(check, "test event \(test.id) appended to \(stream)")]
        } catch {
            return [
                .fail(check, "test event not appended: \(RedisBrokerClient.describe(error))", remedy: remedy(error))
            ]
        }
    }

    /// What to do about a command the server did not run: its ACL when it refused the user, else the server's state
    /// (a full server refuses every write with OOM: the sink's events would wait, not the ACL's fault).
    private static func remedy(_ error: RedisError) -> String {
        switch error.kind {
        case .authentication: "check the ACL"
        case .retriable:
            "the server refuses writes for now (OOM: maxmemory reached under noeviction; MISCONF: its persistence "
                + "fails; LOADING, BUSY): free memory, raise maxmemory or fix its disk; events wait meanwhile"
        case .rejected, .configuration, .protocolViolation: "check the server and its log"
        }
    }
}
