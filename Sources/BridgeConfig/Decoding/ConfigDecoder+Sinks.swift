extension ConfigDecoder {
    /// Header names a webhook sink may not set: the bridge writes them (or the HTTP layer does).
    static let reservedHeaders: Set<String> = [
        "content-type", "content-length", "host", "transfer-encoding", "connection", "webhook-id",
        "webhook-timestamp", "webhook-signature",
    ]

    /// `sinks`: at least one; `subscribed` are the subscribed collections, which sink filters must name.
    mutating func decodeSinks(_ root: MappingView, subscribed: [String]) -> [SinkConfig] {
        guard requirePresent(root, "sinks") else { return [] }
        guard let items = list(root, "sinks", example: "[{ type: ndjson }]") else { return [] }
        if items.isEmpty, let node = root["sinks"] { report("sinks: at least one sink is required", at: node.mark) }
        var result: [SinkConfig] = []
        var ndjsonPaths: [String: String] = [:]
        for (index, item) in items.enumerated() {
            let name = "sinks[\(index)]"
            guard case .mapping(let entries) = item.content else {
                _ = mapping(item, name: name, keys: [], fallback: item.mark)
                continue
            }
            var untyped = MappingView(name: name, mark: item.mark, entries: entries)
            if untyped["type"] == nil, !entries.contains(where: { $0.key == "type" }) {
                // Without a type the allowed keys are unknown; check against both kinds so "tpye" is caught.
                untyped = mapping(item, name: name, keys: ConfigKeys.sinkKeys, fallback: item.mark)
            }
            guard requirePresent(untyped, "type", hint: " (ndjson or webhook)"), let typeNode = untyped["type"],
                let type = choice(typeNode, field: "\(name).type", allowed: ["ndjson", "webhook"])
            else { continue }
            if type == "ndjson" {
                let map = mapping(item, name: name, keys: ConfigKeys.ndjsonSink, fallback: item.mark)
                let sink = decodeNDJSONSink(map, subscribed: subscribed)
                if let owner = ndjsonPaths[sink.path] {
                    let shown = sink.isStandardOutput ? "stdout (\"-\")" : "\"\(sink.path)\""
                    report("\(name).path: \(shown) is already written by \(owner)", at: map["path"]?.mark ?? map.mark)
                }
                ndjsonPaths[sink.path] = name
                result.append(.ndjson(sink))
            } else {
                let map = mapping(item, name: name, keys: ConfigKeys.webhookSink, fallback: item.mark)
                if let sink = decodeWebhookSink(map, subscribed: subscribed) { result.append(.webhook(sink)) }
            }
        }
        return result
    }

    private mutating func decodeNDJSONSink(_ map: MappingView, subscribed: [String]) -> NDJSONSinkConfig {
        var sink = NDJSONSinkConfig()
        if let node = map["path"], let scalar = scalar(node, field: map.field("path"), expected: "a path") {
            if scalar.text.isEmpty {
                report("\(map.field("path")) must not be empty (\"-\" is stdout)", at: node.mark)
            } else {
                sink.path = scalar.text
            }
        }
        sink.fsync = choice(map, "fsync", default: sink.fsync)
        sink.collections = collectionFilter(map, subscribed: subscribed)
        sink.events = events(map, "events", allowed: EventKind.allCases, default: [])
        return sink
    }

    private mutating func decodeWebhookSink(_ map: MappingView, subscribed: [String]) -> WebhookSinkConfig? {
        let url = requiredString(map, "url", hint: " (webhook sinks need one)").flatMap {
            decodeURL($0, field: map.field("url"), at: map["url"]?.mark)
        }
        let secrets = webhookSecrets(map)
        let headers = webhookHeaders(map)
        let timeout = duration(map, "timeout", default: WebhookSinkConfig.defaultTimeout)
        let maxAttempts = integer(
            map,
            "max_attempts",
            default: WebhookSinkConfig.defaultMaxAttempts,
            range: WebhookSinkConfig.maxAttemptsRange
        )
        let maxInFlight = integer(
            map,
            "max_in_flight",
            default: WebhookSinkConfig.defaultMaxInFlight,
            range: WebhookSinkConfig.maxInFlightRange
        )
        var schedule = WebhookSinkConfig.defaultRetrySchedule
        if let items = list(map, "retry_schedule", example: "[5s, 30s, 2m]") {
            if items.isEmpty, let node = map["retry_schedule"] {
                report("\(map.field("retry_schedule")): list at least one delay", at: node.mark)
            } else {
                schedule = items.enumerated().compactMap { index, item in
                    duration(item, field: "\(map.field("retry_schedule"))[\(index)]", allowZero: true)
                }
            }
        }
        let maxOutbox = integer(
            map,
            "max_outbox",
            default: WebhookSinkConfig.defaultMaxOutbox,
            range: WebhookSinkConfig.maxOutboxRange
        )
        let collections = collectionFilter(map, subscribed: subscribed)
        let events = events(map, "events", allowed: EventKind.allCases, default: [])
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
            collections: collections,
            events: events
        )
    }

    /// `collections` of a sink: each must be a subscribed collection, or the filter could never match.
    private mutating func collectionFilter(_ map: MappingView, subscribed: [String]) -> [String] {
        let listed = stringList(map, "collections")
        for (index, entry) in listed.enumerated() where !subscribed.isEmpty && !subscribed.contains(entry.text) {
            report(
                "\(map.field("collections"))[\(index)]: \"\(entry.text)\" is not a subscribed collection"
                    + Suggestion.hint(for: entry.text, in: subscribed),
                at: entry.mark
            )
        }
        return listed.map(\.text)
    }

    /// `secret` (a string or a list) or `secret_file`; empty strings mean "no secret". Never echoes a value.
    private mutating func webhookSecrets(_ map: MappingView) -> [String] {
        var secrets: [(text: String, mark: SourceMark)] = []
        if let node = map["secret"] {
            if case .sequence = node.content {
                secrets = stringList(map, "secret")
            } else if let scalar = scalar(node, field: map.field("secret"), expected: "a string or a list"),
                !scalar.text.isEmpty
            {
                secrets = [(scalar.text, node.mark)]
            }
        }
        if let fileNode = map["secret_file"] {
            if map["secret"] != nil {
                report("\(map.name): set \"secret\" or \"secret_file\", not both", at: map.keyMark("secret_file")!)
            } else if let text = readSecretFile(fileNode, field: map.field("secret_file")) {
                secrets = [(text, fileNode.mark)]
            }
        }
        for secret in secrets where secret.text.hasPrefix("whsec_") && !Self.isBase64(secret.text.dropFirst(6)) {
            report("\(map.field("secret")): a \"whsec_\" secret must be base64 after the prefix", at: secret.mark)
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

    /// `headers`: a mapping of token names to single-line values, none reserved, no name twice (in any case).
    private mutating func webhookHeaders(_ map: MappingView) -> [HTTPHeader] {
        guard let node = map["headers"] else { return [] }
        guard case .mapping(let entries) = node.content else {
            if node.scalar?.alreadyReported != true {
                report(
                    "\(map.field("headers")): expected a mapping such as { x-source: bridge }, got "
                        + node.kindDescription,
                    at: node.mark
                )
            }
            return []
        }
        var headers: [HTTPHeader] = []
        var seen: Set<String> = []
        for entry in entries {
            let field = "\(map.field("headers")).\(entry.key)"
            let lowered = entry.key.lowercased()
            let tokenCharacters = "!#$%&'*+-.^_`|~"
            if entry.key.isEmpty
                || !entry.key.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || tokenCharacters.contains($0)) })
            {
                report("\(map.field("headers")): invalid header name \"\(entry.key)\"", at: entry.keyMark)
                continue
            }
            if Self.reservedHeaders.contains(lowered) {
                report(
                    "\(map.field("headers")): \"\(entry.key)\" is set by the bridge and cannot be configured",
                    at: entry.keyMark
                )
                continue
            }
            if !seen.insert(lowered).inserted {
                report("\(map.field("headers")): header \"\(entry.key)\" is given twice", at: entry.keyMark)
                continue
            }
            guard let scalar = scalar(entry.value, field: field, expected: "a string") else { continue }
            if scalar.text.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) {
                report("\(field): a header value must be one line", at: entry.value.mark)
                continue
            }
            headers.append(HTTPHeader(name: entry.key, value: scalar.text))
        }
        return headers
    }
}
