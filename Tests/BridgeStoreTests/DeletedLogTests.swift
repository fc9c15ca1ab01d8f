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

    /// A command (`status`, `dlq list`) opened the file between the `rm` and the writer's check: SQLite found no log,
    /// started one of its own at the path, and the check, which looked only for a file there, took it for the log.
    /// Before: `renewIfMoved` returned nil, and every later commit stayed in the unlinked log (`rowsInTheFileAlone`
    /// 1 of 2: lost at a crash).
    @Test func aLogAnotherProcessStartedAtThePathDoesNotHideTheDeletedOne() throws {
        var database = try SQLiteDatabase(path: path)
        try database.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB NOT NULL)")
        _ = try database.run("INSERT INTO t (body) VALUES (randomblob(100))")
        try database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        #expect(unlink(path + "-wal") == 0)
        _ = try database.run("INSERT INTO t (body) VALUES (randomblob(100))")
        // What the other process's open leaves: an empty log at the path (the test's own file, as its inode matters).
        #expect(FileManager.default.createFile(atPath: path + "-wal", contents: nil))

        #expect(try SQLiteDatabase.renewIfMoved(&database) == .logStartedAgain, "the log at the path is not this one")
        #expect(try rowsInTheFileAlone() == 2, "every commit so far is in the file itself")
        #expect(try SQLiteDatabase.renewIfMoved(&database) == nil, "the new log is this connection's")
        _ = try database.run("INSERT INTO t (body) VALUES (randomblob(100))")
        try database.close()
        let reopened = try SQLiteDatabase(path: path)
        #expect(try count(reopened) == 3)
        try reopened.close()
    }

    /// The command's side: its open waits while the log is missing beside an index another process holds (a running
    /// bridge between the `rm` and its check), starts no log of its own, and reads every commit once the writer
    /// started its log again; a writer that never does is a retriable error, nothing opened. Before: the open started
    /// a log at the path at once and the read failed ("disk I/O error": the other's index points into frames the new
    /// file does not hold).
    @Test func anOpenWaitsForAWriterToStartItsDeletedLogAgain() throws {
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: TestEnvironment.python)
        writer.arguments = [TestEnvironment.tool("wal_writer.py"), path]
        let input = Pipe()
        let output = Pipe()
        writer.standardInput = input
        writer.standardOutput = output
        try writer.run()
        defer {
            try? input.fileHandleForWriting.write(contentsOf: Data("quit\n".utf8))
            _ = ChildExit.wait(writer, timeout: 10)
        }
        var said = ""
        func waitFor(_ word: String) {
            while !said.contains(word) {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { return }
                said += String(decoding: chunk, as: UTF8.self)
            }
        }
        waitFor("ready")
        #expect(said.contains("ready"))
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))

        // The writer never starts its log again: refused after the wait, retriable, and no log started.
        do {
            _ = try SQLiteDatabase(path: path, options: SQLiteDatabase.Options(readOnly: true))
            Issue.record("opened beside another process's index without its log")
        } catch let error as SQLiteError {
            #expect(error.isRetriable && error.message.contains("-wal is missing"), "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"), "the open started no log of its own")

        // It does, while the open waits: the open goes on and reads both commits.
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) {
            try? input.fileHandleForWriting.write(contentsOf: Data("renew\n".utf8))
        }
        let reader = try SQLiteDatabase(path: path, options: SQLiteDatabase.Options(readOnly: true))
        #expect(try count(reader) == 2)
        try reader.close()
        waitFor("renewed")
    }
}
