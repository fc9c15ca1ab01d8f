/// `dlq replay|purge` whose filters match nothing say so and exit 1 (README.md, "Webhooks"): a typo in an id or a
/// sink position must not read as "done"; an empty `list` of a sink that is not configured says so too.
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
        let why = unknownSinkReasons(configured: configured)
        return "directus-bridge: dlq \(action.rawValue): no dead letter matches \(given)"
            + why.map { "; " + $0 }.joined()
    }

    /// For a `list` that found nothing, the `--sink`s naming no configured sink, said (nil otherwise): "0 dead
    /// letters" alone reads as "none for that sink" where the name was a typo. A listing that found letters needs no
    /// note: a sink removed from the file may still have some, and listing them is how an operator finds them.
    func unknownSinkNote(count: Int, configured: [String]) -> String? {
        guard action == .list, count == 0 else { return nil }
        let why = unknownSinkReasons(configured: configured)
        return why.isEmpty ? nil : "directus-bridge: dlq list: " + why.joined(separator: "; ")
    }

    /// One reason per `--sink` that is neither a configured sink's id nor a position in `sinks`.
    private func unknownSinkReasons(configured: [String]) -> [String] {
        let positions = configured.isEmpty ? "none" : "0 to \(configured.count - 1)"
        return sinks.filter { !configured.contains($0) && Int($0).map(configured.indices.contains) != true }.map {
            "--sink \($0) is neither a configured sink's id nor a position in sinks (\(positions))"
        }
    }
}
