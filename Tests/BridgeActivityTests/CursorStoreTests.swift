import BridgeTestSupport
import Testing

@testable import BridgeCore

@Suite struct CursorStoreTests {
    @Test func aReopenedStoreRestoresExactlyWhatWasRecorded() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "cursor").path + "/nested/state"
        do {
            let store = try CursorStore(directory: directory)
            #expect(store.cursor == nil)
            #expect(try store.startIfNew(at: 100) == ActivityCursor(committed: 100))
            #expect(try store.startIfNew(at: 500) == ActivityCursor(committed: 100), "an existing cursor stays")
            try store.record(ActivityProgress(resolvedIDs: [101, 103, 104, 107]))
            try store.record(ActivityProgress(resolvedIDs: [], abandoned: [105...105]))
            try store.save(SubscriptionCursorState(startID: 100), for: "articles")
            try store.save(SubscriptionCursorState(startID: 104, snapshotWatermark: 104), for: "tags")
            try store.record(ActivityProgress(completedSnapshots: ["tags": 104]))
        }
        let reopened = try CursorStore(directory: directory)
        #expect(reopened.cursor == ActivityCursor(committed: 101, resolvedAbove: [103...105, 107...107]))
        #expect(reopened.cursor?.gaps == [102...102, 106...106])
        #expect(
            reopened.subscriptions == [
                "articles": SubscriptionCursorState(startID: 100),
                "tags": SubscriptionCursorState(startID: 104, snapshotWatermark: 104, snapshotDone: true),
            ]
        )
        try reopened.record(ActivityProgress(resolvedIDs: [102, 106]))
        let again = try CursorStore(directory: directory)
        #expect(again.cursor == ActivityCursor(committed: 107))
    }

    @Test func recordingBeforeAStartCreatesTheCursor() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "cursor").path
        let store = try CursorStore(directory: directory)
        try store.record(ActivityProgress(resolvedIDs: [2]))
        #expect(try CursorStore(directory: directory).cursor == ActivityCursor(committed: 0, resolvedAbove: [2...2]))
    }

    @Test func theDeferredRecorderForwardsToTheConnectedStore() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "cursor").path
        let store = try CursorStore(directory: directory)
        try store.startIfNew(at: 0)
        let recorder = DeferredProgressRecorder()
        recorder.connect(store)
        try recorder.record(ActivityProgress(resolvedIDs: [1]))
        #expect(store.cursor?.committed == 1)
    }
}
