import BridgeSystem

extension ConfigDecoder {
    /// `delivery`.
    mutating func decodeDelivery(_ root: MappingView) -> DeliveryConfig {
        let map = section(root, "delivery", keys: ConfigKeys.delivery)
        let defaults = DeliveryConfig()
        let mode = choice(map, "mode", default: defaults.mode)
        let pollInterval = duration(map, "poll_interval", default: defaults.pollInterval, atLeast: .milliseconds(100))
        var stateDir = defaults.stateDir
        if let node = map["state_dir"], let scalar = scalar(node, field: "delivery.state_dir", expected: "a path") {
            if scalar.text.isEmpty {
                report("delivery.state_dir must not be empty", at: node.mark)
            } else {
                stateDir = scalar.text
            }
        }
        stateDirectoryText = stateDir
        resolvedStateDirectory = ConfiguredPath.resolved(stateDir, workingDirectory: workingDirectory)
        let maxQueue = integer(map, "max_queue", default: defaults.maxQueue, range: DeliveryConfig.maxQueueRange)
        let maxQueueBytes = byteSize(
            map, "max_queue_bytes", default: defaults.maxQueueBytes, range: DeliveryConfig.maxQueueBytesRange)
        return DeliveryConfig(
            mode: mode, pollInterval: pollInterval, stateDir: stateDir, maxQueue: maxQueue, maxQueueBytes: maxQueueBytes)
    }

    /// `http`.
    mutating func decodeHTTP(_ root: MappingView) -> HTTPConfig {
        let map = section(root, "http", keys: ConfigKeys.http)
        guard let text = string(map, "listen"), let node = map["listen"] else { return HTTPConfig() }
        switch ListenAddress.parse(text) {
        case .success(let address): return HTTPConfig(listen: address)
        case .failure(let problem):
            report(
                "http.listen must be host:port such as 127.0.0.1:9464 or [::1]:9464; \"\(text)\" \(problem.reason)",
                at: node.mark
            )
            return HTTPConfig()
        }
    }

    /// `log`.
    mutating func decodeLog(_ root: MappingView) -> LogConfig {
        let map = section(root, "log", keys: ConfigKeys.log)
        var config = LogConfig()
        if let node = map["level"],
            let text = choice(node, field: "log.level", allowed: LogConfig.levelNames),
            let level = LogLevel(configName: text)
        {
            config.level = level
        }
        if let node = map["format"], let text = choice(node, field: "log.format", allowed: LogConfig.formatNames),
            let format = LogFormat(rawValue: text)
        {
            config.format = format
        }
        config.statsInterval = duration(
            map, "stats_interval", default: config.statsInterval, allowZero: true, atLeast: .milliseconds(100))
        config.progressInterval = duration(map, "progress_interval", default: config.progressInterval)
        return config
    }
}
