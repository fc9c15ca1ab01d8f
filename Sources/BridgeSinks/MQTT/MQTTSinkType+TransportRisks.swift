extension MQTTSinkType {
    /// A password in an `mqtt://` URL (sent in CONNECT in the clear) to a broker that is not a loopback address.
    package static func transportRisks(_ mqtt: MQTTSinkConfig) -> [TransportRisk] {
        TransportRisk.passwordInURL(mqtt.url, secrets: mqtt.secrets, client: "MQTT", tlsScheme: "mqtts")
    }
}
