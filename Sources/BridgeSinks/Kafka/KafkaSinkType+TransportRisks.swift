import BridgeSystem

extension KafkaSinkType {
    /// SASL credentials over `SASL_PLAINTEXT` to a broker that is not a loopback address, and librdkafka's
    /// certificate or host-name verification switched off by a property.
    package static func transportRisks(_ kafka: KafkaSinkConfig) -> [TransportRisk] {
        let shown = kafka.brokers.map(ShownURL.of).joined(separator: ",")
        let property = { (name: String) in kafka.properties[name]?.lowercased() ?? "" }
        var risks: [TransportRisk] = []
        let remote = kafka.brokers.contains {
            TransportRisk.exposes(host: TransportRisk.host(ofAuthority: $0), tls: false)
        }
        if property("security.protocol") == "sasl_plaintext" && remote {
            risks.append(
                TransportRisk(
                    message: "Kafka SASL credentials are sent unencrypted (security.protocol SASL_PLAINTEXT) to a "
                        + "non-loopback broker",
                    field: "properties.security.protocol", remedy: "use SASL_SSL",
                    metadata: [LogKey.url: shown]))
        }
        if ["false", "0", "no", "off"].contains(property("enable.ssl.certificate.verification")) {
            risks.append(
                TransportRisk(
                    message: "TLS certificate verification is OFF (enable.ssl.certificate.verification)",
                    field: "properties.enable.ssl.certificate.verification",
                    remedy: "remove it; trust the brokers' CA with ssl.ca.location",
                    metadata: [LogKey.url: shown]))
        }
        if property("ssl.endpoint.identification.algorithm") == "none" {
            risks.append(
                TransportRisk(
                    message: "TLS host name verification is OFF (ssl.endpoint.identification.algorithm: none)",
                    field: "properties.ssl.endpoint.identification.algorithm",
                    remedy: "remove it (the default, https, checks the broker's name against its certificate)",
                    metadata: [LogKey.url: shown]))
        }
        return risks
    }
}
