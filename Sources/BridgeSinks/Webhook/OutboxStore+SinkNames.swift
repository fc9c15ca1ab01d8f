package import BridgeStore

extension OutboxStore {
    /// A name added to a sink that had none keeps its outbox and dead letters (docs/configuration.md, "Sink
    /// names"): the rows of its positional id (`formerIDs`: name → positional id) become the name's, when the
    /// name has no rows yet. Returns what was renamed, in name order.
    package func keepRows(of formerIDs: [String: String]) throws -> [(name: String, former: String)] {
        guard !formerIDs.isEmpty else { return [] }
        return try withState { state in
            let database = state.database
            func count(_ table: String, _ sink: String) throws -> Int {
                try database.query("SELECT COUNT(*) FROM \(table) WHERE sink = ?", [.text(sink)]) { $0.int(at: 0) }
                    .first ?? 0
            }
            var renamed: [(name: String, former: String)] = []
            try database.transaction {
                for (name, former) in formerIDs.sorted(by: { $0.key < $1.key }) {
                    guard try count("outbox", name) == 0, try count("dead_letters", name) == 0,
                        try count("outbox", former) + count("dead_letters", former) > 0
                    else { continue }
                    for table in ["outbox", "dead_letters"] {
                        try database.run("UPDATE \(table) SET sink = ? WHERE sink = ?", [.text(name), .text(former)])
                    }
                    renamed.append((name, former))
                }
            }
            for (name, former) in renamed {
                state.depth[name] = nil  // counted again on next use
                state.depth[former] = nil
            }
            return renamed
        }
    }
}
