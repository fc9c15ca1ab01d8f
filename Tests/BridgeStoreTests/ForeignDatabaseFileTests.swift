import BridgeStore
import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

/// A writer never writes through a database, one of its companions (`-wal`, `-shm`, `-journal`) or a directory
/// another local user controls (docs/RELIABILITY.md, "Files another user controls"): refused as an unusable file,
/// which stops `run` and the writing commands with exit 78, naming the path and the fix; nothing is written.
@Suite struct ForeignDatabaseFileTests {
    let directory: String
    let path: String
    let victim: String

    init() throws {
        directory = try TestEnvironment.makeTemporaryDirectory(prefix: "bridge-store-foreign").path
        path = directory + "/webhooks.db"
        victim = directory + "/victim"
        try "secret\n".write(toFile: victim, atomically: false, encoding: .utf8)
    }

    /// A database with a row, closed (its log checkpointed and removed).
    private func makeDatabase() throws {
        let db = try SQLiteDatabase(path: path)
        try db.execute("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)")
    }

    @Test(arguments: ["", "-wal", "-shm", "-journal"])
    func aLinkInPlaceOfTheDatabaseOrACompanionIsRefused(suffix: String) throws {
        if suffix.isEmpty {
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: victim)
        } else {
            try makeDatabase()
            try FileManager.default.createSymbolicLink(atPath: path + suffix, withDestinationPath: victim)
        }
        let error = #expect(throws: SQLiteError.self) { _ = try SQLiteDatabase(path: path) }
        #expect(error?.isUnusableFile == true)
        let message = error?.message ?? ""
        #expect(message.hasPrefix("\(path)\(suffix) is a symbolic link"), "\(message)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "secret\n")
    }

    @Test(.enabled(if: OtherUser.isAvailable), arguments: ["", "-wal"])
    func aFileOfAnotherUserIsRefusedForWritingAndStillRead(suffix: String) throws {
        try makeDatabase()
        if !suffix.isEmpty { #expect(FileManager.default.createFile(atPath: path + suffix, contents: nil)) }
        try OtherUser.give(path + suffix)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let error = #expect(throws: SQLiteError.self) { _ = try SQLiteDatabase(path: path) }
        #expect(error?.isUnusableFile == true)
        let message = error?.message ?? ""
        #expect(message.contains("\(path)\(suffix) is owned by uid 65534"), "\(message)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        if suffix.isEmpty {
            // A reader (`status`, `dlq list`) changes nothing: root may read the state of the service's user.
            let reader = try SQLiteDatabase(path: path, options: .init(readOnly: true))
            #expect(try reader.query("SELECT x FROM t") { $0.int(at: 0) } == [1])
        }
    }

    @Test(arguments: [0o770, 0o757, 0o1777])
    func aDirectoryOthersMayWriteIsRefused(mode: Int) throws {
        try OtherUser.setMode(directory, mode_t(mode))
        let error = #expect(throws: SQLiteError.self) { _ = try SQLiteDatabase(path: path) }
        #expect(error?.isUnusableFile == true)
        #expect(error?.message.contains("\(directory) is writable by group or others") == true)
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}
