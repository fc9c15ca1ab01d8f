/// Where the saved progress of named sinks was kept before they had a name (docs/configuration.md, "Sink names"):
/// under the positional id `<position>-<type or host:port>-<hash of the target>` their entries had. The entry may
/// have moved in the same edit, so a stored id that differs from the positional id in the position only counts too.
package struct SinkRenames: Sendable, Equatable {
    /// Each named sink's positional id at its position now, by name.
    package var formerIDs: [String: String]
    /// The id of every configured sink: never taken over, even when it differs from a positional id in the position
    /// only (an unnamed sink with the same target).
    package var configured: Set<String>

    /// Renames from `formerIDs` (name → positional id now), among the `configured` ids.
    package init(formerIDs: [String: String] = [:], configured: Set<String> = []) {
        self.formerIDs = formerIDs
        self.configured = configured
    }

    /// What to rename, in name order: for each of `names` (named sinks without saved progress of their own), its
    /// positional id when `stored` has it, else the one stored id that differs from it in the position only (none
    /// when several do). A stored id goes to one name at most.
    package func sources(for names: some Sequence<String>, among stored: Set<String>)
        -> [(name: String, former: String)]
    {
        let available = stored.subtracting(configured)
        let wanted = names.compactMap { name in formerIDs[name].map { (name: name, former: $0) } }
            .sorted { $0.name < $1.name }
        var found = wanted.filter { available.contains($0.former) }
        var taken = Set(found.map(\.former))
        for (name, former) in wanted where !found.contains(where: { $0.name == name }) {
            guard let target = Self.target(of: former) else { continue }
            let moved = available.subtracting(taken).filter { Self.target(of: $0) == target }
            guard moved.count == 1, let only = moved.first else { continue }
            found.append((name, only))
            taken.insert(only)
        }
        return found.sorted { $0.name < $1.name }
    }

    /// A positional id without its `<position>-`; nil for any other id (a name).
    private static func target(of id: String) -> Substring? {
        guard let dash = id.firstIndex(of: "-"), dash > id.startIndex,
            id[..<dash].allSatisfy({ $0.isASCII && $0.isNumber })
        else { return nil }
        return id[id.index(after: dash)...]
    }
}
