import BridgeConfig
import BridgeSystem

extension RedisSinkType {
    /// A password in a `redis://` URL (sent by `AUTH` in the clear) to a server that is not a loopback address.
    package static func transportRisks(_ redis: RedisSinkConfig) -> [TransportRisk] {
        let shown = ShownURL.of(redis.url)
        guard !redis.secrets.isEmpty, !redis.url.lowercased().hasPrefix("rediss://"),
            TransportRisk.exposes(host: TransportRisk.host(ofAuthority: shown), tls: false)
        else { return [] }
        return [
            TransportRisk(
                message: "Redis credentials are sent unencrypted (redis:// without TLS) to a non-loopback server",
                field: "url", remedy: "use a rediss:// URL (with ca_file for a private CA)",
                metadata: [LogKey.url: shown])
        ]
    }
}
