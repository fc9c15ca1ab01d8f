package import BridgeConfig
package import BridgeEvents
internal import BridgeNATS
internal import BridgeSystem

/// `type: jetstream`: events published to NATS JetStream, delivered on their publish acknowledgement
/// (`BrokerSink` over `JetStreamBrokerClient`).
package enum JetStreamSinkType: SinkType {
    package static var configType: SinkConfigType { JetStreamSinkConfig.configType }
    /// Its dead letters (events the broker refused for good) live in `<state_dir>/webhooks.db`.
    package static var keepsLocalState: Bool { true }

    /// `<index>-jetstream-<hash>` of `identityTarget`, not of the summary: its dead letters and cursor are keyed by
    /// the id version 0.2 gave it.
    package static func identity(of settings: JetStreamSinkConfig, index: Int) -> String {
        SinkIdentity.id(index: index, type: configType.name, target: settings.identityTarget)
    }

    package static func makeConnector(_ settings: JetStreamSinkConfig, context: SinkContext) throws(RuntimeOutcome)
        -> any SinkConnector
    {
        let name = settings.summary
        let logger = context.logger.child(label: "jetstream", metadata: [LogKey.sink: context.sinkID])
        // No acknowledgement for two ack timeouts: every publish in flight was retried at least once without one.
        return try BrokerSink.make(
            name: name,
            context: context,
            maxOutstanding: settings.maxOutstanding,
            stallAfter: settings.ackTimeout * 2,
            logger: logger
        ) { () async throws(SinkError) in
            try await JetStreamBrokerClient.open(settings, sinkName: name, logger: logger)
        }
    }

    /// `check`: the servers answer and accept the credentials, and a stream takes the sink's subjects; with
    /// `--send-test-event`, a test event is stored and acknowledged.
    package static func probe(_ settings: JetStreamSinkConfig, context: SinkProbeContext) async -> [CheckResult] {
        let check = context.checkName(type: "jetstream", target: settings.shownServers)
        let connection: NATSConnection
        let publisher: JetStreamPublisher
        do {
            connection = try await NATSConnection.connect(settings: settings.natsSettings, logger: context.logger)
        } catch {
            return [cannotConnect(check, error)]
        }
        do {
            publisher = try JetStreamPublisher.make(connection: connection)
        } catch {
            await connection.close()  // not left to its deinit, whose release may not run before `check` exits
            return [cannotConnect(check, error)]
        }
        let result = await probe(settings, publisher: publisher, check: check, context: context)
        await publisher.close(drainTimeout: .zero)
        await connection.close()
        return [result]
    }

    /// The failed check of a connection or publisher that could not be made, with what to look at.
    private static func cannotConnect(_ check: String, _ error: any Error) -> CheckResult {
        let nats = error as? NATSError
        return .fail(
            check,
            "cannot connect: \(nats.map(JetStreamBrokerClient.describe) ?? "\(error)")",
            remedy: nats?.isTLSFailure == true
                ? "check ca_file and that the server's certificate names the host in servers"
                : nats?.kind == .authentication
                    ? "check credentials_file, token or user/password against the server's accounts"
                    : "check servers and that nats-server runs, with JetStream, and is reachable from this host"
        )
    }

    private static func probe(
        _ settings: JetStreamSinkConfig,
        publisher: JetStreamPublisher,
        check: String,
        context: SinkProbeContext
    ) async -> CheckResult {
        let template = EventNameTemplate(text: settings.subject)
        let pattern = settings.subjectPattern
        let streams: [String]
        let silent: [String]
        do {
            streams = try await publisher.streamNames(matching: pattern, timeout: .seconds(5))
            silent = try await publisher.streamsNotAcknowledging(streams, timeout: .seconds(5))
        } catch {
            let text = (error as? NATSError).map(JetStreamBrokerClient.describe) ?? "\(error)"
            return .fail(
                check,
                "cannot list streams: \(text)",
                remedy: "check that JetStream is enabled for this account"
            )
        }
        guard let stream = streams.first else {
            return .fail(
                check,
                "no stream takes the subjects \(pattern)",
                remedy: "create one, e.g. nats stream add DIRECTUS --subjects '\(pattern)'"
            )
        }
        if !silent.isEmpty {
            return .fail(
                check,
                JetStreamBrokerClient.neverAcknowledges(silent),
                remedy: "make \(silent[0]) acknowledge publishes (no_ack false: nats stream edit \(silent[0]) --ack)"
            )
        }
        // A stream that takes some of the subjects (`directus.articles.*`) overlaps the pattern too; the events of the
        // others would find no stream (no responders) and wait at the sink's cursor forever. So every subject the sink
        // may publish to is asked for.
        var asked: Set<String> = []
        for collection in context.scope.collections {
            for event in context.scope.events {
                let subject = template.render(collection: collection, event: event.rawValue)
                guard asked.insert(subject).inserted else { continue }
                do {
                    if try await publisher.streamNames(matching: subject, timeout: .seconds(5)).isEmpty {
                        return .fail(
                            check,
                            "no stream takes \(subject) (the \(event.rawValue) events of collection \(collection))",
                            remedy: "add it to the subjects of \(stream) (nats stream edit \(stream) --subjects …)"
                        )
                    }
                } catch {
                    let text = (error as? NATSError).map(JetStreamBrokerClient.describe) ?? "\(error)"
                    return .fail(check, "cannot list streams: \(text)", remedy: "check that JetStream is enabled")
                }
            }
        }
        let covered = "stream \(streams.joined(separator: ", ")) takes \(pattern)"
        guard context.sendTestEvent else { return .ok(check, "connected; \(covered)") }
        let test = context.testEvent
        let message = JetStreamMessage(
            subject: template.render(collection: context.testCollection, event: "test"),
            messageID: test.id,
            payload: test.body
        )
        let outcome = (try? await publisher.send([message], within: .seconds(10)))?.first
        switch outcome {
        case .acknowledged(let ack):
            return .ok(check, "test event \(test.id) stored in stream \(ack.stream) (sequence \(ack.sequence))")
        case .failed(let error):
            return .fail(
                check,
                "test event not stored: \(JetStreamBrokerClient.describe(error))",
                remedy: "see \(stream)'s limits and the account's permissions"
            )
        case nil:
            return .fail(
                check,
                "test event to \(message.subject) not acknowledged within 10 s",
                remedy: "check that \(stream) takes \(message.subject) and has a leader"
            )
        }
    }
}
