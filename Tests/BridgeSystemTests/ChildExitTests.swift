import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

/// `ChildExit.wait` beside Foundation's `Process`, which reaps each of its children itself: one owner of the reaping
/// (docs/RELIABILITY.md, "Open: the unit test process crashed once in libdispatch"). The waits run on
/// `BlockingExecutor.shared`: on the cooperative pool they held one of its two threads for seconds, and other suites'
/// timed waits ran out (`KafkaProducerTests.expediteSendsWhatLingersAtOnce` in a whole unit run).
@Suite struct ChildExitTests {
    /// A child whose end Foundation learns of late. Foundation hears of a child's end when the child's copy of a
    /// socket closes, and the shell's background `sleep` inherits that copy, so Foundation reaps the shell only when
    /// the `sleep` ends (as when another test's child inherits it); here the test ends the `sleep` itself. `ChildExit`
    /// gives the status at once, while Foundation still says the shell runs, which is why nothing may read
    /// `Process.terminationStatus` after it (that getter traps then: the integration runner's SIGILL). It leaves the
    /// zombie to Foundation, which then records the same status; when `ChildExit` reaped it behind Foundation's back,
    /// Foundation's `waitpid` got ECHILD and recorded 0 (and had another child of the process taken the pid meanwhile,
    /// Foundation would have waited for and reaped that one).
    @Test func aChildFoundationNoticesLateGivesItsStatusFirstAndIsReapedByFoundation() async throws {
        let pidFile = try TestEnvironment.makeTemporaryDirectory(prefix: "child-exit").appendingPathComponent("sleep")
        let seen = try await BlockingExecutor.shared.perform { () throws -> (Int32?, Character?, Bool, Int32?) in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "sleep 120 & echo $! > \"$0\"; exit 3", pidFile.path]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            let status = ChildExit.wait(process, timeout: TestEnvironment.patient(10))
            let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8)
            let state = stat.flatMap(ChildExit.processState(inStat:))
            let foundationSaysRunning = process.isRunning
            let sleep = (try? String(contentsOf: pidFile, encoding: .utf8))
                .flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            if let sleep { kill(sleep, SIGKILL) }
            let deadline = Date().addingTimeInterval(TestEnvironment.patient(30))
            while process.isRunning && Date() < deadline { usleep(20_000) }
            return (status, state, foundationSaysRunning, process.isRunning ? nil : process.terminationStatus)
        }
        #expect(seen.0 == 3)
        #expect(seen.1 == "Z", "state \(seen.1.map(String.init) ?? "gone"): not left a zombie for Foundation")
        #expect(seen.2, "Foundation knew of the end before the sleep holding its socket was killed")
        #expect(seen.3 == 3, "Foundation's status (nil: it never reaped the child)")
    }

    /// Every test and its support read a child's status from `ChildExit.wait` (or this suite, after `isRunning`
    /// said false): `Process.terminationStatus` read while Foundation has not yet reaped the child stops the whole test
    /// process with SIGILL and no message, and after `ChildExit.wait` that is the usual case on a loaded machine.
    @Test func noTestReadsFoundationsTerminationStatus() throws {
        let tests = TestEnvironment.repositoryRoot.appendingPathComponent("Tests")
        let allowed: Set<String> = ["ChildExit.swift", "ChildExitTests.swift"]
        var readers: [String] = []
        let files = try #require(FileManager.default.enumerator(at: tests, includingPropertiesForKeys: nil))
        for case let file as URL in files where file.pathExtension == "swift" && !allowed.contains(file.lastPathComponent) {
            let text = try String(contentsOf: file, encoding: .utf8)
            if text.contains("terminationStatus") { readers.append(file.lastPathComponent) }
        }
        #expect(readers.isEmpty, "read the status ChildExit.wait returns instead: \(readers)")
    }

    /// A child that runs past the timeout: nil, and it is still running; killed, the signal's number. (SIGKILL: the
    /// child inherits the test thread's signal mask, which may block SIGTERM.)
    @Test func aTimeoutBeforeTheEndIsNilAndAKillIsTheSignal() async throws {
        let seen = try await BlockingExecutor.shared.perform { () throws -> (Int32?, Bool, Int32?) in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sleep")
            process.arguments = ["30"]
            try process.run()
            let early = ChildExit.wait(process, timeout: 0.2)
            let running = process.isRunning
            kill(process.processIdentifier, SIGKILL)
            return (early, running, ChildExit.wait(process, timeout: TestEnvironment.patient(10)))
        }
        #expect(seen.0 == nil)
        #expect(seen.1)
        #expect(seen.2 == SIGKILL)
    }
}
