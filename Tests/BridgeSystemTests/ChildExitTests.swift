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
    /// the `sleep` ends, seconds after the shell exited (as when another test's child inherits it). `ChildExit`
    /// gives the status at once and leaves the zombie to Foundation, which then records the same status; when
    /// `ChildExit` reaped it behind Foundation's back, Foundation's `waitpid` got ECHILD and recorded 0 (and had
    /// another child of the process taken the pid meanwhile, Foundation would have waited for and reaped that one).
    @Test func aChildFoundationNoticesLateIsReapedByFoundationWithItsStatus() async throws {
        let seen = try await BlockingExecutor.shared.perform { () throws -> (Int32?, Character?, Bool, Int32?) in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "sleep 3 & exit 3"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            let status = ChildExit.wait(process, timeout: TestEnvironment.patient(10))
            let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8)
            let state = stat.flatMap(ChildExit.processState(inStat:))
            let reapedByFoundation = !process.isRunning
            let deadline = Date().addingTimeInterval(TestEnvironment.patient(30))
            while process.isRunning && Date() < deadline { usleep(20_000) }
            return (status, state, reapedByFoundation, process.isRunning ? nil : process.terminationStatus)
        }
        #expect(seen.0 == 3)
        // Not reaped by ChildExit: still a zombie of this process, or already reaped by Foundation (a slow machine).
        #expect(seen.1 == "Z" || seen.2, "state \(seen.1.map(String.init) ?? "gone"), Foundation not done")
        #expect(seen.3 == 3, "Foundation's status (nil: it never reaped the child)")
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
