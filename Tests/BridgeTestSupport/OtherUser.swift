import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Another local user, for the tests of docs/RELIABILITY.md "Files another user controls": the files, directories
/// and symbolic links an unprivileged user could leave where the bridge writes.
///
/// Only root can give a file to someone else (`chown`, and `lchown` for the link itself), so as root (CI) the tests
/// hand them to uid 65534 (`nobody`) and prove every refusal with the real binary. Not as root, a test can still make
/// a directory writable by group or others, or put a symbolic link of its own in place of a file, and those tests
/// run; the refusals that need a file of another user are proven by the unit tests instead, with the bridge's
/// checks told to trust a uid that is not the test's (`PathTrust(user:)`, `OwnedPathTests`).
public enum OtherUser {
    /// The other user: `nobody`.
    public static let uid: uid_t = 65534

    /// Whether this process can give files to the other user (it runs as root).
    public static var isAvailable: Bool { geteuid() == 0 }

    /// Gives `path` to the other user; a symbolic link itself, not what it points to.
    public static func give(_ path: String) throws {
        guard lchown(path, uid, uid) == 0 else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
        }
    }

    /// Sets the permission bits of `path` (including the sticky bit), whatever the umask.
    public static func setMode(_ path: String, _ mode: mode_t) throws {
        guard chmod(path, mode) == 0 else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
        }
    }
}
