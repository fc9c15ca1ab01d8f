import BridgeEvents
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
