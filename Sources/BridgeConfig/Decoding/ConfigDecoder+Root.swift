extension ConfigDecoder {
    /// The whole configuration, or nil when a required part is missing (every problem is in `issues`).
    mutating func decodeConfig(_ node: YAMLNode) -> BridgeConfig? {
        guard case .mapping = node.content else {
            report(
                "the top level must be a mapping of keys (directus, subscriptions, sinks, …), got "
                    + node.kindDescription,
                at: node.mark
            )
            return nil
        }
        let root = mapping(node, name: "", keys: ConfigKeys.root, fallback: node.mark)
        let directus = scope == .everything ? decodeDirectus(root) : nil
        directusCAFile = directus?.tls.caFile
        let subscriptions = decodeSubscriptions(root)
        let delivery = decodeDelivery(root)
        let sinks = decodeSinks(root, subscribed: subscriptions.map(\.collection))
        let http = decodeHTTP(root)
        let log = decodeLog(root)
        let state = decodeState(root, mode: delivery.mode)
        let shutdownTimeout = duration(root, "shutdown_timeout", default: BridgeConfig.defaultShutdownTimeout)
        guard directus != nil || scope == .withoutDirectus, !subscriptions.isEmpty, !sinks.isEmpty else { return nil }
        return BridgeConfig(
            directus: directus,
            subscriptions: subscriptions,
            delivery: delivery,
            sinks: sinks,
            http: http,
            log: log,
            state: state,
            shutdownTimeout: shutdownTimeout
        )
    }
}
