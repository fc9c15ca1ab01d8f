import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

/// The write-ahead log deleted alone while the database is open (`rm state/*.db-wal`, taken for a leftover): SQLite
/// asks only whether the database file moved, so every commit went on into the unlinked log, where it reached the file
/// only at a checkpoint — a crash before one lost it, and another process opening the file meanwhile started a second
/// log at the path (docs/RELIABILITY.md, "Careless or hostile operators"). `renewIfMoved`, which the state directory's
/// check runs at most once a second and the outbox before each sync, now notices it too.
@Suite(.timeLimit(.minutes(1)))
struct DeletedLogTests {
    let directory: URL
    let path: String

    init() throws {
        directory = try TestEnvironment.makeTemporaryDirectory(prefix: "bridge-store-deleted-log")
        path = directory.appendingPathComponent("state.sqlite").path
    }

    /// The rows a process opening a copy of the database file alone finds: what a crash would leave at the path.
    func rowsInTheFileAlone() throws -> Int64 {
        let copy = directory.appendingPathComponent("alone-\(UUID().uuidString).sqlite").path
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let database = try SQLiteDatabase(path: copy, options: SQLiteDatabase.Options(readOnly: true))
        let rows = try count(database)
        try database.close()
        return rows
    }

    func count(_ database: SQLiteDatabase) throws -> Int64 {
        let statement = try database.prepare("SELECT count(*) FROM t")
        guard try statement.step() else { return -1 }
        return statement.int64(at: 0)
    }

    @Test func commitsIntoADeletedLogReachTheFileAndANewLogIsStarted() throws {
        var database = try SQLiteDatabase(path: path)
        try database.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB NOT NULL)")
        _ = try database.run("INSERT INTO t (body) VALUES (randomblob(100))")
        #expect(unlink(path + "-wal") == 0)
        _ = try database.run("INSERT INTO t (body) VALUES (randomblob(100))")

        #expect(try SQLiteDatabase.renewIfMoved(&database) == .logStartedAgain, "the deleted log is noticed")
        #expect(FileManager.default.fileExists(atPath: path + "-wal"), "a new log at the path")
        #expect(try rowsInTheFileAlone() == 2, "every commit so far is in the file itself")
        #expect(try SQLiteDatabase.renewIfMoved(&database) == nil, "once")

        _ = try database.run("INSERT INTO t (body) VALUES (randomblob(100))")
        try database.close()
        let reopened = try SQLiteDatabase(path: path)
        #expect(try count(reopened) == 3)
        try reopened.close()
    }
}
