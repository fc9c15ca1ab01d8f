import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Waiting for a child process to end without trusting Foundation alone to notice it soon.
///
/// swift-corelibs-foundation learns of a child's end when the child's copy of a socket pair closes, and only then
/// reaps it (a blocking `waitpid` on its process-manager thread). Every process the child started inherits that
/// copy, and so can a child another thread spawns at the same moment; then Foundation hears of the end only when
/// the last of them exits: `isRunning` stays true and `waitUntilExit` waits that long. (Seen in CI: the
/// AddressSanitizer unit run hung for an hour on two such children, a nats-server watchdog killed by one test and a
/// `nats_admin.py` run of another.) So these waits look at the child itself with `waitid(WNOWAIT)`, which reads a
/// zombie's status without reaping it: Foundation stays the one that reaps. (They reaped it themselves before, with
/// `waitpid` behind Foundation's back; Foundation's later `waitpid` then got ECHILD and recorded status 0, or, had
/// the pid been reused by another child of this process meanwhile, waited for and reaped that one.) An unreaped
/// zombie also keeps its pid from being reused, so a signal sent to it reaches no other process.
///
/// So the status these waits return is the only one to read: when they return, Foundation may still say the child
/// runs, and `Process.terminationStatus` then stops the whole test process with SIGILL and no message (its
/// "task still running" precondition, compiled without its text). An outbox probe that read it after `wait` ended
/// two CI runs of the integration suite that way (docs/RELIABILITY.md, "The integration runner's SIGILL, found");
/// `ChildExitTests` keeps every other reading of it out of the tests.
public enum ChildExit {
    /// Waits until `process` has ended, at most `timeout` seconds (forever when nil). Returns its exit status (the
    /// signal number when a signal ended it, as `Process.terminationStatus`), or nil when the timeout passed first.
    /// The child is left for Foundation to reap.
    @discardableResult
    public static func wait(_ process: Process, timeout: TimeInterval? = nil) -> Int32? {
        let pid = process.processIdentifier
        let deadline = timeout.map { Date().addingTimeInterval($0) }
        var reapedSince: Date?
        while true {
            if !process.isRunning { return process.terminationStatus }
            var info = siginfo_t()
            if waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 {
                // si_pid 0: still running. Otherwise it ended and stays a zombie until Foundation reaps it.
                if info._sifields._sigchld.si_pid == pid { return status(info) }
                reapedSince = nil
            } else if errno == ECHILD {
                // Reaped, so by Foundation, which sets `isRunning` just after; if it does not within a second,
                // something else reaped it and its status is lost.
                let since = reapedSince ?? Date()
                reapedSince = since
                if Date().timeIntervalSince(since) >= 1 { return -1 }
            }
            if let deadline, Date() >= deadline { return nil }
            usleep(10_000)
        }
    }

    /// The state letter of a process or thread in the text of its `/proc/…/stat` (the letter after the ") " that
    /// closes the command name, which may itself hold parentheses); nil when the text has none.
    public static func processState(inStat stat: String) -> Character? {
        guard let close = stat.lastIndex(of: ")"), stat.distance(from: close, to: stat.endIndex) > 2 else { return nil }
        return stat[stat.index(close, offsetBy: 2)]
    }

    /// `waitid`'s report as `Process.terminationStatus` gives it: the exit code, or the number of the signal.
    private static func status(_ info: siginfo_t) -> Int32 {
        info._sifields._sigchld.si_status
    }
}
