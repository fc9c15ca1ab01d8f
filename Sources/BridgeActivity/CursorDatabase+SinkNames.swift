internal import BridgeEvents
internal import BridgeStore
internal import BridgeSystem

extension CursorDatabase {
    /// A name added to a sink that had none keeps its progress (docs/configuration.md, "Sink names"): the rows of its
    /// positional id (`SinkRenames`: the entry's, even when it moved in the same edit) become the name's, when the
    /// file has a cursor under that id and none under the name. Runs before `adopt`, which would otherwise give the
    /// name the progress of the sink furthest behind and remove the positional id's as no longer configured.
    static func rename(_ renames: SinkRenames, in database: SQLiteDatabase, logger: Logger) throws {
        guard !renames.formerIDs.isEmpty else { return }
        let known = Set(try database.query("SELECT sink FROM sink_cursor") { $0.string(at: 0) })
        let moves = renames.sources(for: renames.formerIDs.keys.filter { !known.contains($0) }, among: known)
        guard !moves.isEmpty else { return }
        try database.transaction {
            for (name, former) in moves {
                // OR REPLACE: rows of the name without a cursor of its own are leftovers; the progress wins.
                for table in ["sink_cursor", "sink_resolved_range", "sink_subscription_state"] {
                    try database.run(
                        "UPDATE OR REPLACE \(table) SET sink = ? WHERE sink = ?", [.text(name), .text(former)])
                }
            }
        }
        for (name, former) in moves {
            logger.info(
                "sink progress kept under its new name", metadata: [LogKey.sink: name, LogKey.formerSink: former])
        }
    }
}
