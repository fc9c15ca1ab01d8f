import BridgeConfig
import BridgeSystem

extension WebhookSinkType {
    /// The proxy's credentials, and the receiver's (the URL's query, sensitive headers) sent over `http://` to a host
    /// that is not a loopback address. The signing secret never travels, so it is no risk.
    package static func transportRisks(_ webhook: WebhookSinkConfig) -> [TransportRisk] {
        TransportRisk.proxyCredentials(webhook.proxy, field: "proxy") + credentialRisks(webhook)
    }

    private static func credentialRisks(_ webhook: WebhookSinkConfig) -> [TransportRisk] {
        guard TransportRisk.exposes(host: webhook.url.host, tls: webhook.url.isTLS) else { return [] }
        let carriers = webhook.headers.filter(\.isSensitive).map(\.name)
        guard !carriers.isEmpty || webhook.url.query != nil else { return [] }
        return [
            TransportRisk(
                message: "webhook credentials (URL query, headers) are sent unencrypted to a non-loopback host",
                field: "", remedy: "use an https:// URL",
                metadata: [LogKey.url: webhook.url.shown, "headers": carriers.joined(separator: ",")])
        ]
    }
}
