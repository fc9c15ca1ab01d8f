import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

/// What a database file and its write-ahead log look like after a process that never closed its connection (killed,
/// or exited while another thread still held the connection's owner), and how `close()` avoids leaving them so.
@Suite(.timeLimit(.minutes(1)))
struct WriteAheadLogTests {
    let directory: URL
    let path: String

    init() throws {
        directory = try TestEnvironment.makeTemporaryDirectory(prefix: "bridge-store-wal")
        path = directory.appendingPathComponent("state.sqlite").path
    }

    func contents(_ file: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: file)) }

    /// A database whose schema and rows are all still in its log, as a process leaves them when it exits without
    /// closing the connection: the files are copied to `path` while the writer is open (nothing checkpointed yet).
    func leaveAnUncheckpointedLog() throws {
        let writer = try SQLiteDatabase(path: directory.appendingPathComponent("writer.sqlite").path)
        try writer.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB NOT NULL)")
        for _ in 0..<20 { try writer.run("INSERT INTO t (body) VALUES (randomblob(500))") }
        try FileManager.default.copyItem(atPath: writer.path, toPath: path)
        try FileManager.default.copyItem(atPath: writer.path + "-wal", toPath: path + "-wal")
        #expect(try contents(path).count == 4096, "only page 1 (the header written when WAL was switched on)")
    }

    /// The file's first page overwritten while the log left beside it still holds a copy of that page: SQLite reads
    /// page 1 from the log and would open the file as sound, and its checkpoint at close would overwrite what the
    /// operator damaged (StateFileTests saw `run` go on this way in CI). The header is checked on the file itself.
    @Test func aDamagedHeaderIsRefusedWhateverTheLogHolds() throws {
        try leaveAnUncheckpointedLog()
        let damaged = Data(repeating: 0x41, count: 4096)
        try damaged.write(to: URL(fileURLWithPath: path))
        let log = try contents(path + "-wal")
        for options in [SQLiteDatabase.Options(), SQLiteDatabase.Options(readOnly: true)] {
            let error = try #require(throws: SQLiteError.self) { try SQLiteDatabase(path: path, options: options) }
            #expect(error.isCorrupt, "\(error)")
            #expect(error.message.contains(path) && error.message.contains("not changed"), "\(error)")
        }
        #expect(try contents(path) == damaged)
        #expect(try contents(path + "-wal") == log)
    }

    /// The same log beside an undamaged file is the database's latest state, and opening it recovers every row.
    @Test func anUncheckpointedLogBesideASoundFileIsRead() throws {
        try leaveAnUncheckpointedLog()
        let db = try SQLiteDatabase(path: path)
        #expect(try db.query("SELECT COUNT(*) FROM t") { $0.int(at: 0) } == [20])
    }

    /// `close()` checkpoints the log into the file and removes it at once, even while the object is still
    /// referenced (a thread that has not let go of it yet when the process exits); later calls throw.
    @Test func closeCheckpointsAndRemovesTheLogWhileStillReferenced() throws {
        let db = try SQLiteDatabase(path: path)
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB NOT NULL)")
        for _ in 0..<20 { try db.run("INSERT INTO t (body) VALUES (randomblob(500))") }
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        try db.close()
        #expect(db.isClosed)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"), "the last connection checkpointed")
        #expect(try contents(path).count > 4096, "the rows are in the file")
        let error = try #require(throws: SQLiteError.self) { try db.run("INSERT INTO t (body) VALUES (x'00')") }
        #expect(error.message.contains("closed"), "\(error)")
        #expect(throws: SQLiteError.self) { try db.execute("SELECT 1") }
        try db.close()  // a second close does nothing
        let reopened = try SQLiteDatabase(path: path, options: .init(readOnly: true))
        #expect(try reopened.query("SELECT COUNT(*) FROM t") { $0.int(at: 0) } == [20])
    }

    /// A statement prepared outside the cache and still alive at `close()` keeps the connection open (SQLite closes
    /// it when that statement is finalised): `close()` says so instead of pretending the log was checkpointed.
    @Test func closeReportsAStatementThatOutlivesIt() throws {
        let db = try SQLiteDatabase(path: path)
        try db.execute("CREATE TABLE t (x INTEGER)")
        var held: SQLiteStatement? = try db.prepare("SELECT x FROM t")
        let error = try #require(throws: SQLiteError.self) { try db.close() }
        #expect(error.message.contains("statement"), "\(error)")
        #expect(held?.sql == "SELECT x FROM t")
        held = nil  // finalised: SQLite completes the close now
        #expect(held == nil)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }
}
