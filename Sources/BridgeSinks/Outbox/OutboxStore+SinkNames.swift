package import BridgeEvents
internal import BridgeStore

extension OutboxStore {
    /// A name added to a sink that had none keeps its outbox and dead letters (docs/configuration.md, "Sink
    /// names"): the rows of its positional id (`SinkRenames`) become the name's, when the name has no rows yet.
    /// Returns what was renamed, in name order.
    package func keepRows(of renames: SinkRenames) throws -> [(name: String, former: String)] {
        guard !renames.formerIDs.isEmpty else { return [] }
        return try withState { state in
            let database = state.database
            var moves: [(name: String, former: String)] = []
            try database.transaction {
                let stored = Set(
                    try database.query("SELECT sink FROM outbox UNION SELECT sink FROM dead_letters") {
                        $0.string(at: 0)
                    })
                moves = renames.sources(for: renames.formerIDs.keys.filter { !stored.contains($0) }, among: stored)
                for (name, former) in moves {
                    for table in ["outbox", "dead_letters"] {
                        try database.run("UPDATE \(table) SET sink = ? WHERE sink = ?", [.text(name), .text(former)])
                    }
                }
            }
            for (name, former) in moves {
                state.depth[name] = nil  // counted again on next use
                state.depth[former] = nil
            }
            return moves
        }
    }
}
