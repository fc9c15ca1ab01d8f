import BridgeConfig
import BridgeSystem

extension WebhookSinkType {
    /// The proxy's credentials, and the receiver's (the URL's query, sensitive headers) sent over `http://` to a host
    /// that is not a loopback address. The signing secret never travels, so it is no risk.
    package static func transportRisks(_ webhook: WebhookSinkConfig) -> [TransportRisk] {
        proxyRisks(webhook) + credentialRisks(webhook)
    }

    /// A user and password for the proxy, sent to it in the clear, when it is not a loopback address.
    private static func proxyRisks(_ webhook: WebhookSinkConfig) -> [TransportRisk] {
        guard let proxy = webhook.proxy, proxy.user != nil, TransportRisk.exposes(host: proxy.host, tls: false)
        else { return [] }
        return [
            TransportRisk(
                message: "proxy credentials are sent unencrypted (http://) to a non-loopback proxy",
                field: "proxy", remedy: "use a proxy on a trusted network, or one without credentials",
                metadata: [LogKey.url: proxy.description])
        ]
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
