/// `dlq replay|purge` whose filters match nothing say so and exit 1 (README.md, "Webhooks"): a typo in an id or a
/// sink position must not read as "done".
extension DeadLetterCommand {
    /// Whether any filter was given (without one, an empty store is simply empty).
    var hasFilters: Bool { collection != nil || since != nil || !ids.isEmpty || !sinks.isEmpty }

    /// Whether acting on `count` letters (and dropping `dropped` outbox events) means the filters matched nothing.
    func matchedNothing(count: Int, dropped: Int) -> Bool {
        action != .list && hasFilters && count == 0 && dropped == 0
    }

    /// The line saying so, with the filters as given and, for a `--sink` that names no configured sink, why.
    func nothingMatchedMessage(configured: [String]) -> String {
        var filters: [String] = []
        if let collection { filters.append("--collection \(collection)") }
        if let since { filters.append("--since \(since)") }
        filters += ids.map { "--id \($0)" } + sinks.map { "--sink \($0)" }
        let given = filters.joined(separator: " ")
        var message = "directus-bridge: dlq \(action.rawValue): no dead letter matches \(given)"
        for sink in sinks where !configured.contains(sink) && Int(sink).map(configured.indices.contains) != true {
            let positions = configured.isEmpty ? "none" : "0 to \(configured.count - 1)"
            message += "; --sink \(sink) is neither a configured sink's id nor a position in sinks (\(positions))"
        }
        return message
    }
}
