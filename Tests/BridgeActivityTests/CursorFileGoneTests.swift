import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeActivity
@testable import BridgeEvents

/// `cursor.db` deleted or renamed while the bridge runs (`rm state/cursor.db*` to "start over", a clean-up script).
/// Before: every later batch's progress was committed into the unlinked file, with no error and nothing logged, and
/// the next start found no cursor — a new file, every sink at the newest activity id, every change since the
/// deletion lost from the sinks' point of view, and snapshots taken again (docs/RELIABILITY.md, "Careless or hostile
/// operators"). The same mistake as `webhooks.db` deleted while open (`OutboxFileGoneTests`).
@Suite struct CursorFileGoneTests {
    private static let sinks = ["0-ndjson-a", "1-webhook-b"]

    /// Opens `cursor.db` in a new directory, records some progress of both sinks, then runs `remove` on the path
    /// while it is open, records more, and returns the directory after the database was closed.
    private static func record(removing remove: (String) throws -> Void) throws -> String {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "cursor-gone").path
        let database = try CursorDatabase(directory: directory, sinks: sinks)
        let first = try database.store(for: sinks[0])
        let second = try database.store(for: sinks[1])
        try first.startIfNew(at: 100)
        try second.startIfNew(at: 100)
        try first.save(SubscriptionCursorState(startID: 100, snapshotWatermark: 100), for: "articles")
        try first.record(ActivityProgress(resolvedIDs: [101]))
        try remove(database.path)
        try first.record(ActivityProgress(resolvedIDs: [102], completedSnapshots: ["articles": 100]))
        try second.record(ActivityProgress(resolvedIDs: [101]))
        try first.record(ActivityProgress(resolvedIDs: [103]))
        try database.close()
        return directory
    }

    private static func expectEverythingAtThePath(_ directory: String) throws {
        let cursors = try CursorDatabase.readCursors(directory: directory)
        #expect(
            cursors == [sinks[0]: ActivityCursor(committed: 103), sinks[1]: ActivityCursor(committed: 101)],
            "the progress recorded after the file went")
        let reopened = try CursorDatabase(directory: directory, sinks: sinks).store(for: sinks[0])
        #expect(
            reopened.subscriptions["articles"]
                == SubscriptionCursorState(startID: 100, snapshotWatermark: 100, snapshotDone: true))
        let path = directory + "/" + CursorDatabase.fileName
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int ?? -1) & 0o777 == 0o600)
    }

    @Test func progressRecordedAfterTheFileWasDeletedIsInANewFileAtThePath() throws {
        let directory = try Self.record { path in
            for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
        }
        try Self.expectEverythingAtThePath(directory)
    }

    /// An idle bridge writes nothing after the `rm`: its progress must reach the path without another write — at
    /// the state directory's periodic check (`keepAtPath`), at the latest when the run closes the file. Was: the
    /// next start found no file and took every snapshot again.
    @Test func progressOfAFileDeletedWithoutALaterWriteIsAtThePathAfterClose() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "cursor-gone").path
        let database = try CursorDatabase(directory: directory, sinks: Self.sinks)
        let store = try database.store(for: Self.sinks[0])
        try store.startIfNew(at: 100)
        try store.record(ActivityProgress(resolvedIDs: [101]))
        for suffix in ["", "-wal", "-shm"] { unlink(database.path + suffix) }
        try database.keepAtPath()
        #expect(try CursorDatabase.readCursors(directory: directory)[Self.sinks[0]] == ActivityCursor(committed: 101))
        try #require(rename(database.path, database.path + ".old") == 0)
        try database.close()
        #expect(try CursorDatabase.readCursors(directory: directory)[Self.sinks[0]] == ActivityCursor(committed: 101))
    }

    /// `rm state/cursor.db-wal` alone: progress recorded after it went into the unlinked log, which a crash lost (the
    /// file alone held none of it). Now the write that records it first writes the log into the file.
    @Test func progressRecordedAfterTheLogAloneWasDeletedIsInTheFileItself() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "cursor-log-gone").path
        let database = try CursorDatabase(directory: directory, sinks: Self.sinks)
        let store = try database.store(for: Self.sinks[0])
        try store.startIfNew(at: 100)
        try store.record(ActivityProgress(resolvedIDs: [101]))
        #expect(unlink(database.path + "-wal") == 0)
        try store.record(ActivityProgress(resolvedIDs: [102]))
        // What a crash now leaves at the path: the file, without the log the process held.
        let crashed = try TestEnvironment.makeTemporaryDirectory(prefix: "cursor-log-gone-copy").path
        try FileManager.default.copyItem(atPath: database.path, toPath: crashed + "/" + CursorDatabase.fileName)
        #expect(try CursorDatabase.readCursors(directory: crashed)[Self.sinks[0]] == ActivityCursor(committed: 102))
        try database.close()
    }

    @Test func progressRecordedAfterTheFileWasRenamedIsInANewFileAtThePath() throws {
        let directory = try Self.record { path in
            try #require(rename(path, path + ".old") == 0)
        }
        try Self.expectEverythingAtThePath(directory)
    }
}
