internal import BridgeEvents
internal import BridgeStore
internal import BridgeSystem

extension CursorDatabase {
    /// A name added to a sink that had none keeps its progress (docs/configuration.md, "Sink names"): the rows of its
    /// positional id become the name's, when the file has a cursor under the positional id and none under the name.
    /// Runs before `adopt`, which would otherwise give the name the progress of the sink furthest behind and remove
    /// the positional id's as no longer configured. A positional id that is itself configured (another sink has it)
    /// is left alone.
    static func rename(
        _ formerIDs: [String: String], configured: Set<String>, in database: SQLiteDatabase, logger: Logger
    ) throws {
        guard !formerIDs.isEmpty else { return }
        let known = Set(try database.query("SELECT sink FROM sink_cursor") { $0.string(at: 0) })
        let renames = formerIDs.filter { name, former in
            !known.contains(name) && known.contains(former) && !configured.contains(former)
        }.sorted { $0.key < $1.key }
        guard !renames.isEmpty else { return }
        try database.transaction {
            for (name, former) in renames {
                // OR REPLACE: rows of the name without a cursor of its own are leftovers; the progress wins.
                for table in ["sink_cursor", "sink_resolved_range", "sink_subscription_state"] {
                    try database.run(
                        "UPDATE OR REPLACE \(table) SET sink = ? WHERE sink = ?", [.text(name), .text(former)])
                }
            }
        }
        for (name, former) in renames {
            logger.info(
                "sink progress kept under its new name", metadata: [LogKey.sink: name, LogKey.formerSink: former])
        }
    }
}
