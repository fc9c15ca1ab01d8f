import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

/// A state file as a careless operator leaves it — read-only, in a read-only directory, overwritten, truncated — is
/// refused when it is opened for writing, with a message naming it, and is never changed by the attempt.
@Suite(.timeLimit(.minutes(1)))
struct UnusableFileTests {
    let directory: URL
    let path: String

    init() throws {
        directory = try TestEnvironment.makeTemporaryDirectory(prefix: "bridge-store-unusable")
        path = directory.appendingPathComponent("state.sqlite").path
    }

    /// A WAL database of `rows` rows of about 1 KiB, closed (its log checkpointed into the file).
    func makeDatabase(rows: Int = 200) throws {
        let db = try SQLiteDatabase(path: path)
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB NOT NULL); CREATE INDEX t_body ON t(body)")
        try db.transaction {
            for _ in 0..<rows { try db.run("INSERT INTO t (body) VALUES (randomblob(1000))") }
        }
    }

    func contents() throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    @Test(.enabled(if: UnwritablePath.isSupported))
    func aReadOnlyFileIsRefusedForWritingAndStillReadable() throws {
        try makeDatabase()
        let unwritable = try UnwritablePath(path)
        let error = try #require(throws: SQLiteError.self) { try SQLiteDatabase(path: path) }
        #expect(error.isReadOnly)
        #expect(error.isUnusableFile)
        #expect(error.message.contains(path))
        #expect(error.message.contains("read-only"))
        // Readers (`dlq list`, `status`) still read it.
        let reader = try SQLiteDatabase(path: path, options: .init(readOnly: true))
        #expect(try reader.query("SELECT COUNT(*) FROM t") { $0.int(at: 0) } == [200])
        unwritable.restore()
        #expect(throws: Never.self) { try SQLiteDatabase(path: path) }
    }

    @Test(.enabled(if: UnwritablePath.isSupported))
    func aReadOnlyDirectoryIsNamedWhenTheLogCannotBeCreated() throws {
        try makeDatabase()
        let unwritable = try UnwritablePath(directory.path)
        let error = try #require(throws: SQLiteError.self) { try SQLiteDatabase(path: path) }
        #expect(error.isUnusableFile)
        #expect(error.message.contains(directory.path))
        #expect(error.message.contains("-wal"))
        unwritable.restore()
    }

    @Test func garbageOverTheFirstPageIsReportedAsDamagedAndTheFileKept() throws {
        try makeDatabase()
        var bytes = try contents()
        bytes.replaceSubrange(0..<4096, with: Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 13) }))
        try bytes.write(to: URL(fileURLWithPath: path))
        let error = try #require(throws: SQLiteError.self) { try SQLiteDatabase(path: path) }
        #expect(error.isCorrupt)
        #expect(error.message.contains(path))
        #expect(error.message.contains("not changed"))
        #expect(try contents() == bytes)
    }

    @Test func aTextFileIsReportedAsNotADatabase() throws {
        let text = Data(String(repeating: "sinks:\n  - type: webhook\n", count: 200).utf8)
        try text.write(to: URL(fileURLWithPath: path))
        let error = try #require(throws: SQLiteError.self) { try SQLiteDatabase(path: path) }
        #expect(error.isCorrupt)
        #expect(try contents() == text)
    }

    @Test func aTruncatedFileIsReportedAsDamaged() throws {
        try makeDatabase(rows: 2000)
        let bytes = try contents()
        let truncated = bytes.prefix(bytes.count / 2)
        try truncated.write(to: URL(fileURLWithPath: path))
        let error = try #require(throws: SQLiteError.self) { try SQLiteDatabase(path: path) }
        #expect(error.isCorrupt)
        #expect(try contents() == truncated)
    }

    /// A damaged page past the schema (an index page in the middle of the file) is found by the open-time check.
    @Test func aDamagedPageInTheMiddleIsFound() throws {
        try makeDatabase(rows: 2000)
        var bytes = try contents()
        let middle = (bytes.count / 2) / 4096 * 4096
        bytes.replaceSubrange(middle..<(middle + 4096), with: Data(repeating: 0x5A, count: 4096))
        try bytes.write(to: URL(fileURLWithPath: path))
        let error = try #require(throws: SQLiteError.self) { try SQLiteDatabase(path: path) }
        #expect(error.isCorrupt)
        #expect(try contents() == bytes)
    }

    /// A new (empty) file is a new database, not a damaged one.
    @Test func anEmptyFileIsANewDatabase() throws {
        FileManager.default.createFile(atPath: path, contents: Data())
        let db = try SQLiteDatabase(path: path)
        try db.execute("CREATE TABLE t (x INTEGER)")
    }
}
