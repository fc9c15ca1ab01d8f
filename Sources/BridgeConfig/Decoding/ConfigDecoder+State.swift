extension ConfigDecoder {
    /// `state`; `mode` is the decoded `delivery.mode`, which `jetstream` needs to be `activity` or `auto`.
    mutating func decodeState(_ root: MappingView, mode: DeliveryMode) -> StateConfig {
        let map = section(root, "state", keys: ConfigKeys.state)
        var config = StateConfig()
        config.backend = choice(map, "backend", default: config.backend)
        let servers = stringList(map, "servers")
        config.servers = servers.map(\.text)
        for (text, mark) in servers {
            guard let issue = ServerAddress.natsURLIssue(text, field: map.field("servers")) else { continue }
            report(issue, at: mark)
        }
        for key in ["bucket", "name"] {
            guard let node = map[key], let text = string(map, key) else { continue }
            if StateConfig.isValidName(text) {
                if key == "bucket" { config.bucket = text } else { config.name = text }
            } else {
                report("\(map.field(key)) must be 1 to 64 of A-Z, a-z, 0-9, _ and -; got \"\(text)\"", at: node.mark)
            }
        }
        if let node = map["lease"], let lease = duration(node, field: map.field("lease"), allowZero: false) {
            if StateConfig.leaseRange.contains(lease) {
                config.lease = lease
            } else {
                report("\(map.field("lease")) must be between 3s and 10m, got \(ConfigText.duration(lease))", at: node.mark)
            }
        }
        guard config.backend == .jetstream else { return config }
        if servers.isEmpty && map["servers"] == nil {
            report("\(map.field("servers")) is required with backend: jetstream (e.g. [\"nats://nats-1:4222\"])",
                at: map["backend"]?.mark ?? map.mark)
        } else if servers.isEmpty, let node = map["servers"] {
            report("\(map.field("servers")) must list at least one server with backend: jetstream", at: node.mark)
        }
        if mode == .live {
            report(
                "\(map.field("backend")): jetstream needs delivery.mode activity (or auto resolving to it): shared "
                    + "cursors exist only in activity mode",
                at: map["backend"]?.mark ?? map.mark)
        }
        return config
    }
}
