internal import CLinux

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Keeps the process's memory — tokens, passwords, signing secrets, item data — out of core files and away from
/// other processes of the same user (docs/RELIABILITY.md "Threat model").
///
/// `PR_SET_DUMPABLE` 0: no core file is written, and /proc/PID/{mem,environ,fd,…} and ptrace are closed to every
/// process without CAP_SYS_PTRACE, even one of the same user (the files under /proc/PID become root's). The core
/// size limit 0 holds for anything the process starts too. The systemd unit sets `LimitCORE=0` as well, so that
/// nothing depends on this call alone.
package enum CoreDumpGuard {
    /// Applies both; returns what failed (normally nothing: both only lower what the process may do).
    @discardableResult
    package static func apply() -> [SystemError] {
        var failures: [SystemError] = []
        let (dumpable, dumpableErrno) = (clinux_set_dumpable(0), errno)
        if dumpable != 0 { failures.append(SystemError(operation: "prctl(PR_SET_DUMPABLE, 0)", errno: dumpableErrno)) }
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        let (limit, limitErrno) = (setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none), errno)
        if limit != 0 { failures.append(SystemError(operation: "setrlimit(RLIMIT_CORE, 0)", errno: limitErrno)) }
        return failures
    }
}
