import BridgeCore
import BridgeEvents
import BridgeSinks
import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

/// `StateDirectoryLock`: one holder at a time, named in the refusal, free again once the holder is gone.
@Suite struct StateDirectoryLockUnitTests {
    @Test func aSecondClaimIsRefusedWithTheHoldersPidUntilTheFirstIsReleased() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "state-lock").appendingPathComponent("a/b")
        var first: StateDirectoryLock? = try StateDirectoryLock(directory: directory.path)
        #expect(first != nil)
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("bridge.lock").path))
        do {
            _ = try StateDirectoryLock(directory: directory.path)
            Issue.record("a second claim on a held directory succeeded")
        } catch {
            guard case .held(let path, let pid) = error else {
                Issue.record("unexpected failure: \(error)")
                return
            }
            #expect(path == directory.path)
            #expect(pid == getpid())
            #expect(error.description.contains("pid \(getpid())"))
        }
        first = nil
        // Free again once the holder is gone. Not at once in this process: a child another test spawns keeps a copy of
        // the descriptor from its fork until its exec closes it (O_CLOEXEC), and with it the lock (failed 1 in 33
        // AddressSanitizer unit runs, "in use by another directus-bridge (pid <this process>)").
        let deadline = ContinuousClock.now + .seconds(TestEnvironment.patient(10))
        var again: StateDirectoryLock?
        while again == nil && ContinuousClock.now < deadline {
            again = try? StateDirectoryLock(directory: directory.path)
            if again == nil { usleep(10_000) }
        }
        #expect(again != nil, "the released lock never became free")
    }

    /// `rm state/*` under a running bridge: the lock stayed on the deleted file, and a second claim of the directory
    /// made a new `bridge.lock` and got it — two bridges on one state directory (docs/RELIABILITY.md, "Careless or
    /// hostile operators").
    @Test func aDeletedLockFileIsLockedAgainAtItsPath() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "state-lock").path
        let lock = try StateDirectoryLock(directory: directory)
        #expect(try lock.keep() == .unchanged)
        #expect(unlink(lock.path) == 0)
        #expect(try lock.keep() == .lockedAgain)
        #expect(FileManager.default.fileExists(atPath: lock.path), "no lock file at the path")
        #expect(throws: StateDirectoryLock.Failure.self, "a second claim after the deletion") {
            _ = try StateDirectoryLock(directory: directory)
        }
        #expect(try lock.keep() == .unchanged)
    }

    @Test func aRenamedLockFileIsLetGoAndANewOneLocked() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "state-lock").path
        let lock = try StateDirectoryLock(directory: directory)
        #expect(rename(lock.path, lock.path + ".old") == 0)
        #expect(try lock.keep() == .lockedAgain)
        #expect(throws: StateDirectoryLock.Failure.self, "a second claim after the rename") {
            _ = try StateDirectoryLock(directory: directory)
        }
        // The old file is let go: whoever locks it now (nobody should) does not wait for this bridge.
        let old = open(lock.path + ".old", O_RDWR | O_CLOEXEC)
        defer { close(old) }
        #expect(flock(old, LOCK_EX | LOCK_NB) == 0, "the renamed file is still locked")
    }

    /// The file at the path locked by another holder meanwhile (a second bridge started after the `rm`): this one
    /// must learn that it no longer holds the directory.
    @Test func aLockFileAnotherHolderTookMeanwhileIsLost() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "state-lock").path
        let lock = try StateDirectoryLock(directory: directory)
        #expect(unlink(lock.path) == 0)
        let other = try StateDirectoryLock(directory: directory)
        defer { withExtendedLifetime(other) {} }
        do {
            _ = try lock.keep()
            Issue.record("the lock at the path is another holder's, and keep() said nothing")
        } catch {
            guard case .held(_, let pid) = error else {
                Issue.record("unexpected failure: \(error)")
                return
            }
            #expect(pid == getpid())
        }
    }

    /// The running bridge's side: a directory another bridge took stops the run (its shutdown signal) with the
    /// configuration problem's exit code, naming the other bridge; checks come at most once a second.
    @Test func theKeeperStopsTheRunWhenAnotherBridgeTookTheDirectory() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "state-lock").path
        let stop = ShutdownSignal()
        let lock = try StateDirectoryLock(directory: directory)
        let keeper = StateDirectoryKeeper(lock: lock, stop: stop, logger: .silent)
        var kept = 0
        let now = ContinuousClock.now + StateDirectoryKeeper.interval
        keeper.check(files: [("cursor.db", { kept += 1 })], now: now)
        keeper.check(files: [("cursor.db", { kept += 1 })], now: now + .milliseconds(500))
        #expect(kept == 1, "checked more than once within a second")
        #expect(unlink(lock.path) == 0)
        let other = try StateDirectoryLock(directory: directory)
        defer { withExtendedLifetime(other) {} }
        keeper.check(files: [("cursor.db", { kept += 1 })], now: now + .seconds(2))
        #expect(stop.isTriggered, "the run goes on beside another bridge")
        #expect(kept == 1, "the files of a directory another bridge holds were kept")
        guard case .configurationProblem(let message)? = keeper.lostClaim else {
            Issue.record("no exit 78: \(String(describing: keeper.lostClaim))")
            return
        }
        #expect(message.contains("pid \(getpid())"), "\(message)")
    }

    /// `rm -r state` under a running bridge: the keeper's check makes the directory again with the lock (the same
    /// checked open as at start), and the outbox's copy then finds it: nothing of what waited is lost.
    @Test func aStateDirectoryRemovedWholeIsMadeAgainWithItsFiles() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "state-lock").path + "/state"
        let lock = try StateDirectoryLock(directory: directory)
        let store = try OutboxStore.open(stateDir: directory)
        #expect(try store.insert([outboxEvent("evt_1")], sink: "0-webhook-a", now: 1, limit: 10).inserted == 1)
        try FileManager.default.removeItem(atPath: directory)
        let keeper = StateDirectoryKeeper(lock: lock, stop: ShutdownSignal(), logger: .silent)
        keeper.check(
            files: [(OutboxStore.fileName, { try store.keepAtPath() })],
            now: .now + StateDirectoryKeeper.interval)
        #expect(keeper.lostClaim == nil)
        #expect(FileManager.default.fileExists(atPath: lock.path), "no lock file in the directory made again")
        #expect(throws: StateDirectoryLock.Failure.self) { _ = try StateDirectoryLock(directory: directory) }
        try store.close()
        #expect(try OutboxStore(path: store.path).outboxCount(sink: "0-webhook-a") == 1)
    }

    private func outboxEvent(_ id: String) -> EncodedEvent {
        EncodedEvent(
            id: id, event: .update, collection: "articles", key: "1", origin: .live, seq: nil,
            time: Timestamp(microsecondsSinceEpoch: 0), receivedAt: Timestamp(microsecondsSinceEpoch: 0),
            subscription: "articles", body: Array(#"{"id":"\#(id)"}"#.utf8))
    }

    @Test func anUnusableDirectoryIsASystemFailure() throws {
        let file = try TestEnvironment.makeTemporaryDirectory(prefix: "state-lock").appendingPathComponent("plain")
        FileManager.default.createFile(atPath: file.path, contents: Data("x".utf8))
        do {
            _ = try StateDirectoryLock(directory: file.path)
            Issue.record("a file as the state directory was claimed")
        } catch {
            guard case .system = error else {
                Issue.record("unexpected failure: \(error)")
                return
            }
        }
    }
}
