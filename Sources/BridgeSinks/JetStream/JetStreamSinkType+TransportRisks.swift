import BridgeNATS

extension JetStreamSinkType {
    /// NATS credentials over `nats://` without TLS to a server that is not a loopback address.
    package static func transportRisks(_ jetStream: JetStreamSinkConfig) -> [TransportRisk] {
        let credentials = jetStream.credentials != .none
        return TransportRisk.nats(servers: jetStream.servers, credentials: credentials, tls: jetStream.caFile != nil)
            .map { [$0] } ?? []
    }
}
