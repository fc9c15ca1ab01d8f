extension RedisSinkType {
    /// A password in a `redis://` URL (sent by `AUTH` in the clear) to a server that is not a loopback address.
    package static func transportRisks(_ redis: RedisSinkConfig) -> [TransportRisk] {
        TransportRisk.passwordInURL(redis.url, secrets: redis.secrets, client: "Redis", tlsScheme: "rediss")
    }
}
