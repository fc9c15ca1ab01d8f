package import BridgeConfig
internal import BridgeEvents

extension WebhookSinkConfig {
    /// How `sinks` entries of `type: webhook` are read.
    package static let configType = SinkConfigType(
        name: "webhook",
        keys: [
            "url", "secret", "secret_file", "headers", "timeout", "max_attempts", "max_in_flight", "retry_schedule",
            "max_outbox", "proxy",
        ],
        decode: { decoder, map in decode(&decoder, map) }
    )

    /// Header names a webhook sink may not set: the bridge writes them (or the HTTP layer does).
    package static let reservedHeaders: Set<String> = [
        "content-type", "content-length", "host", "transfer-encoding", "connection", "webhook-id",
        "webhook-timestamp", "webhook-signature",
    ]

    /// Reads a `type: webhook` entry.
    package static func decode(_ decoder: inout ConfigDecoder, _ map: MappingView) -> WebhookSinkConfig? {
        let url = decoder.requiredString(map, "url", hint: " (webhook sinks need one)").flatMap {
            decoder.decodeURL($0, field: map.field("url"), at: map["url"]?.mark)
        }
        let secrets = secrets(&decoder, map)
        let headers = decoder.headers(map, "headers", reserved: reservedHeaders)
        let timeout = decoder.duration(map, "timeout", default: WebhookSinkConfig.defaultTimeout)
        let maxAttempts = decoder.integer(
            map,
            "max_attempts",
            default: WebhookSinkConfig.defaultMaxAttempts,
            range: WebhookSinkConfig.maxAttemptsRange
        )
        let maxInFlight = decoder.integer(
            map,
            "max_in_flight",
            default: WebhookSinkConfig.defaultMaxInFlight,
            range: WebhookSinkConfig.maxInFlightRange
        )
        var schedule = WebhookSinkConfig.defaultRetrySchedule
        if let items = decoder.list(map, "retry_schedule", example: "[5s, 30s, 2m]") {
            if items.isEmpty, let node = map["retry_schedule"] {
                decoder.report("\(map.field("retry_schedule")): list at least one delay", at: node.mark)
            } else {
                schedule = items.enumerated().compactMap { index, item in
                    decoder.duration(item, field: "\(map.field("retry_schedule"))[\(index)]", allowZero: true)
                }
            }
        }
        let maxOutbox = decoder.integer(
            map,
            "max_outbox",
            default: WebhookSinkConfig.defaultMaxOutbox,
            range: WebhookSinkConfig.maxOutboxRange
        )
        let proxy = decoder.proxy(map)
        guard let url else { return nil }
        return WebhookSinkConfig(
            url: url,
            secrets: secrets,
            headers: headers,
            timeout: timeout,
            maxAttempts: maxAttempts,
            maxInFlight: maxInFlight,
            retrySchedule: schedule,
            maxOutbox: maxOutbox,
            caFile: decoder.directusCAFile,
            proxy: proxy
        )
    }

    /// `secret` (a string or a list) or `secret_file`; a `whsec_` secret must be base64 after the prefix.
    private static func secrets(_ decoder: inout ConfigDecoder, _ map: MappingView) -> [String] {
        let secrets = decoder.secretList(map, "secret", orFile: "secret_file")
        for secret in secrets where secret.text.hasPrefix("whsec_") && !isBase64(secret.text.dropFirst(6)) {
            decoder.report("\(map.field("secret")): a \"whsec_\" secret must be base64 after the prefix", at: secret.mark)
        }
        return secrets.map(\.text)
    }

    private static func isBase64(_ text: Substring) -> Bool {
        var trimmed = text
        var padding = 0
        while trimmed.hasSuffix("=") {
            trimmed = trimmed.dropLast()
            padding += 1
        }
        let alphabet = trimmed.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "/") }
        let shapeOK = padding == 0 ? trimmed.count % 4 != 1 : padding <= 2 && text.count % 4 == 0
        return !trimmed.isEmpty && alphabet && shapeOK
    }
}
