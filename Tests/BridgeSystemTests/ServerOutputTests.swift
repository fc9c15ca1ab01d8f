import BridgeSystem
import Foundation
import Testing

@testable import BridgeTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A helper server's output as `PythonServer` reads it, on a thread of its own rather than through libdispatch
/// (`ServerOutput`; docs/RELIABILITY.md, "Open: the unit test process crashed once in libdispatch"). The tests' waits
/// run on `BlockingExecutor.shared`, never on the cooperative pool's two threads.
@Suite(.timeLimit(.minutes(2))) struct ServerOutputTests {
    /// `script` run by /bin/sh with its stdout and stderr on a new `ServerOutput`.
    static func started(_ script: String) throws -> (process: Process, output: ServerOutput) {
        let output = try ServerOutput()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        let ends = output.childEnds
        process.standardOutput = ends.stdout
        process.standardError = ends.stderr
        try process.run()
        output.closeChildEnds()
        return (process, output)
    }

    /// The first line is the `READY` line; everything after it, on stdout and stderr, is kept, to the child's last
    /// line once `finish` returned.
    @Test func everythingAfterTheFirstLineIsKept() async throws {
        let seen = try await BlockingExecutor.shared.perform { () throws -> (String?, Int32?, String) in
            let (process, output) = try Self.started(
                "echo READY 1; echo out; echo err >&2; sleep 0.2; echo late; echo late-err >&2")
            let ready = output.readLine(timeout: TestEnvironment.patient(20))
            try output.startReading()
            let status = ChildExit.wait(process, timeout: TestEnvironment.patient(20))
            output.finish()
            output.finish()  // again: nothing
            return (ready, status, output.text)
        }
        #expect(seen.0 == "READY 1")
        #expect(seen.1 == 0)
        #expect(Set(seen.2.split(separator: "\n")) == ["out", "err", "late", "late-err"], "\(seen.2)")
    }

    /// A process the server started keeps its stdout open after the server exited: `finish` takes what is there and
    /// returns, without waiting for the pipe's end (here five minutes away; the suite's time limit fails the test).
    @Test func finishDoesNotWaitForAPipeAnotherProcessHolds() async throws {
        let seen = try await BlockingExecutor.shared.perform { () throws -> (String?, Int32?, String) in
            let (process, output) = try Self.started("echo READY 1; sleep 300 & echo holder $!; echo gone")
            let ready = output.readLine(timeout: TestEnvironment.patient(20))
            try output.startReading()
            let status = ChildExit.wait(process, timeout: TestEnvironment.patient(20))
            output.finish()
            let lines = output.text.split(separator: "\n")
            if let holder = lines.first(where: { $0.hasPrefix("holder ") }), let pid = Int32(holder.dropFirst(7)) {
                kill(pid, SIGKILL)  // the `sleep` this test started
            }
            return (ready, status, output.text)
        }
        #expect(seen.0 == "READY 1")
        #expect(seen.1 == 0)
        #expect(seen.2.split(separator: "\n").contains("gone"), "\(seen.2)")
    }
}
