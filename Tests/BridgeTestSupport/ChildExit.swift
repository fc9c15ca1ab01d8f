import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Waiting for a child process to end without trusting Foundation alone to notice.
///
/// swift-corelibs-foundation learns of a child's end from SIGCHLD, and when processes start and end on several
/// threads at once it can miss one: the child stays a zombie, `isRunning` stays true and `waitUntilExit` spins
/// forever. (Seen in CI: the AddressSanitizer unit run hung for an hour on two such zombies, a nats-server watchdog
/// killed by one test and a `nats_admin.py` run of another.) So these waits also look at the child in /proc, and reap
/// a zombie that Foundation has left alone for a second.
public enum ChildExit {
    /// Waits until `process` has ended, at most `timeout` seconds (forever when nil). Returns its exit status (the
    /// signal number when a signal ended it, as `Process.terminationStatus`), or nil when the timeout passed first.
    @discardableResult
    public static func wait(_ process: Process, timeout: TimeInterval? = nil) -> Int32? {
        let pid = process.processIdentifier
        let deadline = timeout.map { Date().addingTimeInterval($0) }
        var leftSince: Date?
        while true {
            if !process.isRunning { return process.terminationStatus }
            switch state(of: pid) {
            case .running:
                leftSince = nil
            case .zombie, .gone:
                let since = leftSince ?? Date()
                leftSince = since
                if Date().timeIntervalSince(since) >= 1 {
                    var status: Int32 = 0
                    if waitpid(pid, &status, WNOHANG) == pid { return exitStatus(status) }
                    // Foundation reaped it in between (its `isRunning` turns false), or it is gone unseen.
                    if state(of: pid) == .gone && process.isRunning { return -1 }
                }
            }
            if let deadline, Date() >= deadline { return nil }
            usleep(10_000)
        }
    }

    private enum State { case running, zombie, gone }

    /// The child's state from `/proc/<pid>/stat`.
    private static func state(of pid: Int32) -> State {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return .gone }
        return processState(inStat: stat) == "Z" ? .zombie : .running
    }

    /// The state letter of a process or thread in the text of its `/proc/…/stat` (the letter after the ") " that
    /// closes the command name, which may itself hold parentheses); nil when the text has none.
    public static func processState(inStat stat: String) -> Character? {
        guard let close = stat.lastIndex(of: ")"), stat.distance(from: close, to: stat.endIndex) > 2 else { return nil }
        return stat[stat.index(close, offsetBy: 2)]
    }

    /// `waitpid`'s status as `Process.terminationStatus` gives it: the exit code, or the number of the signal.
    private static func exitStatus(_ status: Int32) -> Int32 {
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : signal
    }
}
