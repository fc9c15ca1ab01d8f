package import BridgeConfig
package import BridgeEvents
import BridgeMQTT
internal import BridgeSystem

#if canImport(Glibc)
    import Glibc
#endif

/// `type: mqtt`: events published with QoS 1 or 2, delivered on PUBACK or PUBCOMP (`BrokerSink` over
/// `MQTTBrokerClient`).
package enum MQTTSinkType: SinkType {
    package static var configType: SinkConfigType { MQTTSinkConfig.configType }
    /// Its dead letters (events the broker refused for good) live in `<state_dir>/webhooks.db`.
    package static var keepsLocalState: Bool { true }

    /// The persistent session's client id: fixed per sink, so that the broker finds the session again after a
    /// restart of the bridge.
    static func clientID(sinkID: String) -> String { "directus-bridge-" + sinkID }

    package static func makeConnector(_ settings: MQTTSinkConfig, context: SinkContext) throws(RuntimeOutcome)
        -> any SinkConnector
    {
        let name = settings.summary
        let logger = context.logger.child(label: "mqtt", metadata: [LogKey.sink: context.sinkID])
        let clientID = clientID(sinkID: context.sinkID)
        // No acknowledgement for twice the test event's wait: the broker is down or hung (reported; nothing is
        // published again while the client holds it).
        return try BrokerSink.make(
            name: name,
            context: context,
            maxOutstanding: settings.maxInFlight,
            stallAfter: MQTTBrokerClient.acknowledgementTimeout * 2,
            logger: logger
        ) { () async throws(SinkError) in
            try await MQTTBrokerClient.open(settings, clientID: clientID, sinkName: name, logger: logger)
        }
    }

    /// `check`: the broker accepts the connection and the credentials (as a client id of its own, whose session
    /// ends with the probe, so a running bridge keeps its session); with `--send-test-event`, a test event is
    /// published and acknowledged.
    package static func probe(_ settings: MQTTSinkConfig, context: SinkProbeContext) async -> [CheckResult] {
        let check = context.checkName(type: "mqtt", target: ShownURL.of(settings.url))
        let client: MQTTClient
        do {
            let clientID = "directus-bridge-check-\(getpid())-\(context.index)"
            client = try await MQTTClient.connect(
                settings: try settings.clientSettings(clientID: clientID, sessionExpiry: .zero)
            )
        } catch {
            return [
                .fail(
                    check,
                    "cannot connect: \(MQTTBrokerClient.describe(error))",
                    remedy: error.kind == .authentication
                        ? "check the user and password in url against the broker's password file or ACL, and ca_file"
                        : "check url and that the broker runs and is reachable from this host"
                )
            ]
        }
        let version = client.status.protocolVersion == 5 ? "MQTT 5" : "MQTT 3.1.1 (no user properties)"
        let window = MQTTBrokerClient.windowNote(client.status, maxInFlight: settings.maxInFlight).map { "; " + $0 }
        guard context.sendTestEvent else {
            await client.close()
            return [.ok(check, "connected with \(version)\(window ?? ""); topic \(settings.topic)")]
        }
        let test = context.testEvent
        let topic = EventNameTemplate(text: settings.topic).render(collection: context.testCollection, event: "test")
        let message = MQTTMessage(
            topic: topic,
            payload: test.body,
            userProperties: MQTTBrokerClient.userProperties(
                id: test.id, type: SinkTestEvent.type, collection: context.testCollection, key: "", event: "test")
        )
        let outcome = await client.publish([message], timeout: MQTTBrokerClient.acknowledgementTimeout).first
        await client.close()
        if let error = outcome?.error {
            return [
                .fail(
                    check, "test event not acknowledged: \(MQTTBrokerClient.describe(error))",
                    remedy: publishRemedy(error, topic: topic))
            ]
        }
        return [.ok(check, "test event \(test.id) published to \(topic), acknowledged (QoS \(settings.qos))")]
    }

    /// What to do about a test event the broker did not acknowledge, by the error's kind: the ACL only when the broker
    /// refused the user the topic (it said "check the broker's ACL" for any error, a message too large or a broker
    /// that went away too).
    static func publishRemedy(_ error: MQTTError, topic: String) -> String {
        switch error.kind {
        case .authentication: "check the broker's ACL for \(topic): the user may not publish there"
        case .rejected, .configuration:
            "the broker refuses this message (larger than its message_size_limit, or a topic it does not take): "
                + "see its log"
        case .retriable:
            "the broker took no publish for now (it went away, its quota is exceeded, or it did not answer in time): "
                + "check that it runs and see its log"
        }
    }
}
