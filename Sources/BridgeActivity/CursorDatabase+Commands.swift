import BridgeEvents
import BridgeStore
import Synchronization

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// What `resync` writes to and `status` reads from `cursor.db` (README.md, "Resync" and "Status").
extension CursorDatabase {
    /// Asks the next start of each of `sinks` to snapshot subscription `uid` again (`directus-bridge resync`),
    /// written beside a running bridge, which acts on it at its next start.
    ///
    /// Only sinks that have a cursor get the request (all of them when none has one yet): a sink without one takes
    /// over the progress of the sink furthest behind at its first start, the request included, and a row of its own
    /// would stand in the way of that copy.
    package func requestResync(of uid: String, sinks: [String]) throws {
        try database.withLock { database in
            let started = Set(try database.query("SELECT sink FROM sink_cursor") { $0.string(at: 0) })
            let targets = started.isEmpty ? sinks : sinks.filter(started.contains)
            try database.transaction {
                for sink in targets {
                    try database.run(
                        """
                        INSERT INTO sink_subscription_state (sink, uid, start_id, resync_requested) VALUES (?, ?, 0, 1)
                        ON CONFLICT (sink, uid) DO UPDATE SET resync_requested = 1
                        """,
                        [.text(sink), .text(uid)])
                }
            }
        }
    }

    /// The subscriptions with a `resync` request no start took yet, by sink id (the running bridge's
    /// `ResyncRequestWatcher`).
    package func resyncRequestsBySink() throws -> [String: Set<String>] {
        try database.withLock { database in
            try database.query("SELECT sink, uid FROM sink_subscription_state WHERE resync_requested = 1") {
                ($0.string(at: 0), $0.string(at: 1))
            }
        }.reduce(into: [:]) { requests, row in requests[row.0, default: []].insert(row.1) }
    }

    /// Every sink's subscription states in `<directory>/cursor.db` by sink id, read without changing the file (for
    /// `status`, while `run` may be using it); empty when there is no such file. A state directory written before
    /// 0.2 gives its states under the id "" (as ``readCursors(directory:)`` does its cursor).
    package static func readSubscriptionStates(directory: String) throws -> [String: [String: SubscriptionCursorState]] {
        let path = StateDirectory.join(directory, fileName)
        guard access(path, F_OK) == 0 else { return [:] }
        let database = try SQLiteDatabase(path: path, options: .init(readOnly: true))
        let version = try database.userVersion()
        guard version >= 1 else { return [:] }
        let table = version >= 3 ? "sink_subscription_state" : "subscription_state"
        let sink = version >= 3 ? "sink" : "''"
        // Before version 4 (written by an older bridge, not migrated yet) there are no resync requests, before 5 no
        // resume points, before 6 no collection of a resume point (which the next start does not use), before 7 no
        // collection of the state (which the next start records).
        let resync = version >= 4 ? "resync_requested" : "0"
        let resume =
            version >= 6
            ? "snapshot_after, snapshot_lines, snapshot_collection"
            : version >= 5 ? "snapshot_after, snapshot_lines, NULL" : "NULL, 0, NULL"
        let collection = version >= 7 ? "collection, snapshot_query" : "NULL, NULL"
        let sql =
            "SELECT \(sink), uid, start_id, snapshot_watermark, snapshot_done, \(resync), \(resume), \(collection) "
            + "FROM \(table)"
        let rows: [(String, String, SubscriptionCursorState)] = try database.query(sql) { row in
            let state = SubscriptionCursorState(
                startID: row.int64(at: 2), snapshotWatermark: row.optionalInt64(at: 3),
                snapshotDone: row.int64(at: 4) != 0, resyncRequested: row.int64(at: 5) != 0,
                snapshotAfter: row.optionalString(at: 6), snapshotLines: row.int64(at: 7),
                snapshotCollection: row.optionalString(at: 8), collection: row.optionalString(at: 9),
                snapshotQuery: row.optionalString(at: 10))
            return (row.string(at: 0), row.string(at: 1), state)
        }
        var states: [String: [String: SubscriptionCursorState]] = [:]
        for (sink, uid, state) in rows { states[sink, default: [:]][uid] = state }
        return states
    }
}
