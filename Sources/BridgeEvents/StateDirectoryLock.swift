#if canImport(Glibc)
    @preconcurrency import Glibc
#endif
package import BridgeSystem
private import Synchronization

/// The `run` command's claim on `delivery.state_dir`: one bridge per directory. A second bridge started by mistake
/// on the same directory (a copied unit, a replica on a shared volume) would read the same cursors and outbox and
/// deliver every change twice; it refuses to start instead (docs/ARCHITECTURE.md, "State").
///
/// An exclusive `flock` on `<state_dir>/bridge.lock`, held while this object lives. The kernel drops it when the
/// process ends in any way, SIGKILL included, so there is no stale lock to clean up. The file holds the holder's
/// pid for the refusal message only; the lock, not the pid, decides. A running bridge checks now and then that the
/// file it holds is still the one at the path (`keep`). The `dlq`, `status` and `resync` commands neither take nor
/// test it: they work while the bridge runs.
package final class StateDirectoryLock: Sendable {
    /// The lock file's name inside the state directory.
    package static let fileName = "bridge.lock"

    /// Why the directory could not be claimed.
    package enum Failure: Error, CustomStringConvertible {
        /// Another process holds the lock; its pid when the file names one.
        case held(directory: String, pid: Int32?)
        /// Another local user controls the directory or the lock file (docs/RELIABILITY.md, "Files another user
        /// controls"): the bridge writes nothing there.
        case unsafe(UnsafePathError)
        /// The directory or the lock file could not be created or opened (a `SystemError`).
        case system(any Error)

        package var description: String {
            switch self {
            case .held(let directory, let pid):
                let holder = pid.map { "another directus-bridge (pid \($0))" } ?? "another directus-bridge"
                return "delivery.state_dir \(directory) is in use by \(holder): give each bridge its own state_dir, "
                    + "or run replicas with state.backend: jetstream"
            case .unsafe(let error):
                return "delivery.state_dir: \(error)"
            case .system(let error):
                return "cannot lock the state directory: \(error)"
            }
        }
    }

    /// What `keep` found.
    package enum Kept: Sendable, Equatable {
        /// The held file is the one at the path.
        case unchanged
        /// The held file had been deleted, renamed or replaced; a new one at the path is locked now, the old one let
        /// go.
        case lockedAgain
    }

    /// The directory claimed.
    package let directory: String
    /// `<directory>/bridge.lock`.
    package let path: String
    /// The locked file's descriptor; replaced by `keep`.
    private let descriptor: Mutex<Int32>

    /// Creates `directory` when missing (0700), refuses it or the lock file when another user controls either
    /// (`StateDirectory.prepare`, `PrivateFile.open`), and takes the lock without waiting.
    package init(directory: String) throws(Failure) {
        self.directory = directory
        path = StateDirectory.join(directory, Self.fileName)
        descriptor = Mutex(try Self.lock(directory: directory, path: path))
    }

    deinit {
        descriptor.withLock { _ = close($0) }
    }

    /// Makes sure the lock held is the one at the path, for the periodic check of a running bridge
    /// (`StateDirectoryKeeper`). A `bridge.lock` deleted, renamed or replaced under the bridge (`rm state/*`, a
    /// clean-up script) left the `flock` on a file no second bridge opens: a second `run` on the directory created a
    /// new one, locked it and ran beside this one, each delivering every change (docs/RELIABILITY.md, "Careless or
    /// hostile operators"). So when the held file has no name left or the path names another file, the path is
    /// claimed again as at start (the same checked open) and the old file let go. Throws `.held` when another
    /// process locked the file at the path meanwhile (this bridge must stop), else as `init` throws. An `fstat` and
    /// an `lstat` when nothing changed.
    package func keep() throws(Failure) -> Kept {
        try descriptor.withLock { held throws(Failure) -> Kept in
            guard !Self.isAtPath(held, path) else { return .unchanged }
            let taken = try Self.lock(directory: directory, path: path)
            close(held)
            held = taken
            return .lockedAgain
        }
    }

    /// Whether `descriptor`'s file still has a name and is the file at `path`; true when that cannot be told (a
    /// failing `fstat`, a path that cannot be looked at for another reason than its absence).
    private static func isAtPath(_ descriptor: Int32, _ path: String) -> Bool {
        var held = stat()
        guard fstat(descriptor, &held) == 0 else { return true }
        if held.st_nlink == 0 { return false }
        var named = stat()
        guard lstat(path, &named) == 0 else {
            let code = errno
            return code != ENOENT && code != ENOTDIR
        }
        return named.st_dev == held.st_dev && named.st_ino == held.st_ino
    }

    /// Prepares `directory`, opens the lock file and locks it without waiting, writing this process's pid into it.
    private static func lock(directory: String, path: String) throws(Failure) -> Int32 {
        let descriptor: Int32
        do {
            try StateDirectory.prepare(directory)
            descriptor = try PrivateFile.open(path, flags: O_RDWR)
        } catch let error as UnsafePathError {
            throw .unsafe(error)
        } catch {
            throw .system(error)
        }
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            let holder = code == EWOULDBLOCK ? Self.recordedPID(descriptor) : nil
            close(descriptor)
            if code == EWOULDBLOCK { throw .held(directory: directory, pid: holder) }
            throw .system(SystemError(operation: "flock \(path)", errno: code))
        }
        Self.record(getpid(), in: descriptor)
        return descriptor
    }

    /// Replaces the file's content with `pid` (best effort: the message is the only reader).
    private static func record(_ pid: Int32, in descriptor: Int32) {
        let text = Array("\(pid)\n".utf8)
        guard ftruncate(descriptor, 0) == 0 else { return }
        _ = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
    }

    /// The pid the holder wrote, when the file holds one (at most 32 bytes are read).
    private static func recordedPID(_ descriptor: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let digits = buffer[..<count].prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        guard let pid = Int32(String(decoding: digits, as: UTF8.self)), pid > 0 else { return nil }
        return pid
    }
}
