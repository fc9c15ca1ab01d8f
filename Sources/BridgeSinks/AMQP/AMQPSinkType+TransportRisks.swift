extension AMQPSinkType {
    /// A password in an `amqp://` URL (sent by PLAIN authentication in the clear) to a broker that is not a loopback
    /// address. A URL without one logs in as `guest`, which RabbitMQ accepts from loopback only: no secret travels.
    package static func transportRisks(_ amqp: AMQPSinkConfig) -> [TransportRisk] {
        TransportRisk.passwordInURL(amqp.url, secrets: amqp.secrets, client: "AMQP", tlsScheme: "amqps")
    }
}
