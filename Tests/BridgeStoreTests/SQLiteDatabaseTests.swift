import BridgeStore
import BridgeTestSupport
import Foundation
import Synchronization
import Testing

/// The SQLite owner against real files in a temporary directory.
@Suite(.timeLimit(.minutes(1)))
struct SQLiteDatabaseTests {
    let directory: URL
    let path: String

    init() throws {
        directory = try TestEnvironment.makeTemporaryDirectory(prefix: "bridge-store")
        path = directory.appendingPathComponent("state.sqlite").path
    }

    func open(_ options: SQLiteDatabase.Options = .init()) throws -> SQLiteDatabase {
        try SQLiteDatabase(path: path, options: options)
    }

    /// The database file and its write-ahead log are 0600 (they hold event bodies): SQLite's own default is 0644.
    @Test func aCreatedDatabaseIsPrivate() throws {
        let db = try open()
        try db.execute("CREATE TABLE t (x INTEGER)")
        try db.run("INSERT INTO t (x) VALUES (1)")
        for file in [path, path + "-wal", path + "-shm"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: file)
            #expect((attributes[.posixPermissions] as? Int ?? -1) & 0o777 == 0o600, "\(file)")
        }
    }

    @Test func createReadUpdateDelete() throws {
        let db = try open()
        try db.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score REAL, note TEXT)")
        try db.run("INSERT INTO items (name, score, note) VALUES (?, ?, ?)", [.text("ä😀"), .real(1.5), .null])
        #expect(db.lastInsertRowID == 1)
        #expect(db.changes == 1)
        try db.run("INSERT INTO items (name, score, note) VALUES (?, ?, ?)", [.text("b"), .real(2), .text("x")])
        #expect(db.lastInsertRowID == 2)

        let rows = try db.query("SELECT id, name, score, note FROM items ORDER BY id") { row in
            (row.int64(at: 0), row.string(at: 1), row.double(at: 2), row.optionalString(at: 3))
        }
        #expect(rows.count == 2)
        #expect(rows[0].0 == 1 && rows[0].1 == "ä😀" && rows[0].2 == 1.5 && rows[0].3 == nil)
        #expect(rows[1].0 == 2 && rows[1].1 == "b" && rows[1].2 == 2 && rows[1].3 == "x")

        #expect(try db.run("UPDATE items SET score = score + 1") == 2)
        #expect(try db.query("SELECT sum(score) FROM items") { $0.double(at: 0) } == [5.5])
        #expect(try db.run("DELETE FROM items WHERE id = ?", [.integer(1)]) == 1)
        #expect(try db.query("SELECT count(*) FROM items") { $0.int(at: 0) } == [1])
    }

    @Test func blobsRoundTripIncludingEmptyAndNull() throws {
        let db = try open()
        try db.execute("CREATE TABLE b (id INTEGER PRIMARY KEY, data BLOB)")
        let bytes: [UInt8] = Array(0...255) + [0, 0, 0]
        let insert = try db.statement(for: "INSERT INTO b (data) VALUES (?)")
        try insert.bind(bytes, at: 1)
        #expect(try insert.step() == false)
        let insertEmpty = try db.statement(for: "INSERT INTO b (data) VALUES (?)")
        try insertEmpty.bind([UInt8](), at: 1)
        try insertEmpty.step()
        try db.run("INSERT INTO b (data) VALUES (?)", [.null])

        let values = try db.query("SELECT data, typeof(data) FROM b ORDER BY id") { ($0.value(at: 0), $0.string(at: 1)) }
        #expect(values.map(\.0) == [.blob(bytes), .blob([]), .null])
        #expect(values.map(\.1) == ["blob", "blob", "null"])
    }

    @Test func transactionRollsBackWhenTheBodyThrows() throws {
        struct Boom: Error {}
        let db = try open()
        try db.execute("CREATE TABLE t (v INTEGER)")
        try db.transaction { try db.run("INSERT INTO t VALUES (1)") }
        #expect(throws: Boom.self) {
            try db.transaction {
                try db.run("INSERT INTO t VALUES (2)")
                throw Boom()
            }
        }
        #expect(!db.isInTransaction)
        #expect(try db.query("SELECT v FROM t") { $0.int(at: 0) } == [1])
        // A constraint failure inside the body rolls back the earlier writes too.
        try db.execute("CREATE TABLE u (v INTEGER UNIQUE)")
        let error = #expect(throws: SQLiteError.self) {
            try db.transaction {
                try db.run("INSERT INTO u VALUES (1)")
                try db.run("INSERT INTO u VALUES (1)")
            }
        }
        #expect(error?.isConstraint == true)
        #expect(error?.sql == "INSERT INTO u VALUES (1)")
        #expect(try db.query("SELECT count(*) FROM u") { $0.int(at: 0) } == [0])
    }

    @Test func preparedStatementsAreCachedAndReused() throws {
        let db = try open()
        try db.execute("CREATE TABLE t (v INTEGER)")
        let first = try db.statement(for: "INSERT INTO t VALUES (?)")
        for value in 0..<100 {
            let statement = try db.statement(for: "INSERT INTO t VALUES (?)")
            #expect(statement === first)
            try statement.bind(Int64(value), at: 1)
            try statement.step()
        }
        #expect(db.cachedStatementCount == 1)
        // A reused statement has its bindings cleared: an unbound parameter is NULL.
        let again = try db.statement(for: "INSERT INTO t VALUES (?)")
        try again.step()
        #expect(try db.query("SELECT count(*), count(v), sum(v) FROM t") { [$0.int(at: 0), $0.int(at: 1), $0.int(at: 2)] }
            == [[101, 100, 4950]])
        #expect(db.cachedStatementCount == 2)
    }

    @Test func walIsOnAndSynchronousIsConfigurable() throws {
        let db = try open()
        #expect(try db.journalMode == "wal")
        #expect(try db.query("PRAGMA synchronous") { $0.int(at: 0) } == [2])  // FULL
        let normal = try SQLiteDatabase(path: directory.appendingPathComponent("n.sqlite").path,
            options: .init(synchronous: .normal))
        #expect(try normal.query("PRAGMA synchronous") { $0.int(at: 0) } == [1])  // NORMAL
        try db.execute("CREATE TABLE t (v INTEGER)")
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        // WAL is recorded in the file: a plain second connection finds it on.
        let other = try open(.init(readOnly: true))
        #expect(try other.journalMode == "wal")
    }

    @Test func aSecondConnectionReadsWhileTheFirstWrites() throws {
        let writer = try open()
        try writer.execute("CREATE TABLE t (v INTEGER)")
        try writer.run("INSERT INTO t VALUES (1)")
        let reader = try open(.init(readOnly: true))
        #expect(try reader.query("SELECT count(*) FROM t") { $0.int(at: 0) } == [1])

        // While the writer holds an open write transaction, the reader still reads the last commit (WAL).
        try writer.execute("BEGIN IMMEDIATE")
        try writer.run("INSERT INTO t VALUES (2)")
        #expect(try reader.query("SELECT count(*) FROM t") { $0.int(at: 0) } == [1])
        try writer.execute("COMMIT")
        #expect(try reader.query("SELECT count(*) FROM t") { $0.int(at: 0) } == [2])
    }

    @Test func busyWriterFailsWithIsBusyAfterTheTimeout() throws {
        let first = try open()
        try first.execute("CREATE TABLE t (v INTEGER)")
        let second = try open(.init(busyTimeout: .milliseconds(100)))
        try first.execute("BEGIN IMMEDIATE")
        let error = #expect(throws: SQLiteError.self) { try second.transaction { try second.run("INSERT INTO t VALUES (2)") } }
        #expect(error?.isBusy == true)
        #expect(error?.isRetriable == true)
        try first.execute("COMMIT")
        try second.transaction { try second.run("INSERT INTO t VALUES (2)") }
        #expect(try first.query("SELECT v FROM t") { $0.int(at: 0) } == [2])
    }

    @Test func busyWriterWaitsForAShortTransactionInAnotherThread() throws {
        let first = try open()
        try first.execute("CREATE TABLE t (v INTEGER)")
        let locked = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let path = self.path
        let thread = Thread {
            // Its own connection, like the `dlq` command in another process.
            do {
                let other = try SQLiteDatabase(path: path)
                try other.execute("BEGIN IMMEDIATE")
                try other.run("INSERT INTO t VALUES (1)")
                locked.signal()
                usleep(150_000)
                try other.execute("COMMIT")
            } catch {
                locked.signal()
            }
            done.signal()
        }
        thread.start()
        locked.wait()
        try first.transaction { try first.run("INSERT INTO t VALUES (2)") }  // waits inside the 5 s busy timeout
        done.wait()
        #expect(try first.query("SELECT v FROM t ORDER BY v") { $0.int(at: 0) } == [1, 2])
    }

    @Test func migrationsApplyOnce() throws {
        let migrations = [
            SQLiteMigration(version: 1, sql: "CREATE TABLE a (v INTEGER)"),
            SQLiteMigration(version: 2, sql: "ALTER TABLE a ADD COLUMN w TEXT; CREATE TABLE b (v INTEGER)"),
        ]
        let db = try open()
        #expect(try db.userVersion() == 0)
        #expect(try db.migrate(migrations) == [1, 2])
        #expect(try db.userVersion() == 2)
        #expect(try db.migrate(migrations) == [])
        // Another connection (a restart) sees the version and applies only what is new.
        let later = try open()
        let more = migrations + [SQLiteMigration(version: 3, sql: "CREATE TABLE c (v INTEGER)")]
        #expect(try later.migrate(more) == [3])
        #expect(try later.userVersion() == 3)
        // A failing migration leaves the version and schema where they were.
        let broken = more + [SQLiteMigration(version: 4, sql: "CREATE TABLE d (v INTEGER); NOT SQL")]
        #expect(throws: SQLiteError.self) { try later.migrate(broken) }
        #expect(try later.userVersion() == 3)
        #expect(try later.query("SELECT count(*) FROM sqlite_master WHERE name = 'd'") { $0.int(at: 0) } == [0])
    }

    @Test func diskFullIsSurfacedAsIsFull() throws {
        let db = try open()
        try db.execute("CREATE TABLE t (data BLOB)")
        let pages = try db.query("PRAGMA page_count") { $0.int(at: 0) }[0]
        try db.execute("PRAGMA max_page_count = \(pages + 4)")
        var inserted = 0
        let error = #expect(throws: SQLiteError.self) {
            for _ in 0..<100 {
                try db.transaction { try db.run("INSERT INTO t VALUES (?)", [.blob(Array(repeating: 7, count: 4000))]) }
                inserted += 1
            }
        }
        #expect(error?.isFull == true)
        #expect(error?.isRetriable == false)
        #expect(!db.isInTransaction)
        // Every row that was reported as written is there; the failed one is not.
        #expect(try db.query("SELECT count(*) FROM t") { $0.int(at: 0) } == [inserted])
        #expect(inserted < 100)
    }

    @Test func corruptFileIsReported() throws {
        FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x41, count: 8192))
        let error = #expect(throws: SQLiteError.self) {
            let db = try open()
            _ = try db.query("SELECT count(*) FROM sqlite_master") { $0.int(at: 0) }
        }
        #expect(error?.isCorrupt == true)
    }

    @Test func errorsCarryCodesMessageAndShortenedSQL() throws {
        let db = try open()
        let long = "SELECT * FROM missing_table WHERE " + String(repeating: "x = 1 AND ", count: 50) + "1"
        let error = #expect(throws: SQLiteError.self) { _ = try db.prepare(long) }
        #expect(error?.resultCode == 1)
        #expect(error?.message.contains("missing_table") == true)
        #expect(error.map { $0.sql.count <= SQLiteError.maxSQLLength + 1 } == true)
        #expect(error.map { long.hasPrefix(String($0.sql.dropLast())) } == true)
    }

    /// Opens the database at `path` with `options` on a thread of its own and waits at most 60 s: the open's error,
    /// "opened" when it succeeded, or nil when it did not come back.
    func openWithDeadline(_ options: SQLiteDatabase.Options) -> String? {
        let answer = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        let path = path
        Thread.detachNewThread {
            let result: String
            do {
                let db = try SQLiteDatabase(path: path, options: options)
                _ = try db.query("SELECT count(*) FROM sqlite_master") { $0.int(at: 0) }
                result = "opened"
            } catch {
                result = "\(error)"
            }
            answer.withLock { $0 = result }
            done.signal()
        }
        _ = done.wait(timeout: .now() + 60)
        return answer.withLock { $0 }
    }

    /// The database or its `-wal`/`-shm` file as a named pipe (a `mkfifo` in the wrong place, a restore gone wrong):
    /// creating the database, or opening it read-only as `status`, `resync` and `dlq` do, waited in `open` for a
    /// writer forever. Now it is refused at once, naming the file and what it is.
    @Test(arguments: ["", "-wal", "-shm"], [false, true])
    func aNamedPipeIsRefusedNotWaitedFor(suffix: String, readOnly: Bool) throws {
        if !suffix.isEmpty {
            // A database in WAL mode whose files are gone after a clean close.
            try open().execute("CREATE TABLE t (x INTEGER)")
        }
        let fifo = path + suffix
        try? FileManager.default.removeItem(atPath: fifo)
        try #require(mkfifo(fifo, 0o600) == 0)
        defer {
            // Releases an open still blocked on the pipe (the defect): a writer that opens and closes gives it EOF.
            let writer = Glibc.open(fifo, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
        }
        let outcome = openWithDeadline(.init(readOnly: readOnly))
        #expect(
            outcome?.contains("\(fifo) is a named pipe, not a regular file") == true,
            "\(suffix) readOnly \(readOnly): \(String(describing: outcome))")
    }
}
