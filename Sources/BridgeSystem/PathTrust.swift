#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Whose files, directories and symbolic links the bridge may write through (docs/RELIABILITY.md, "Files another
/// user controls"): the user it runs as, and root. Root can do anything to the process anyway, and owns `/`, `/tmp`,
/// `/var` and the other directories most paths pass through. Anyone else could redirect what the bridge writes
/// (a link to a file of the bridge's user) or read it.
public struct PathTrust: Sendable, Equatable {
    /// The user the bridge runs as: its effective uid, which the kernel checks its file accesses against.
    public var user: UInt32

    /// Trusts `user` and root. Tests pass a uid other than their own to see their own files as another user's.
    public init(user: UInt32) {
        self.user = user
    }

    /// The process's effective user, and root.
    public static var current: PathTrust { PathTrust(user: geteuid()) }

    /// Whether what the bridge writes may go into or through something `owner` owns.
    public func trusts(_ owner: UInt32) -> Bool { owner == user || owner == 0 }

    /// "uid 65534 (nobody)" for messages; the uid alone when the user database has no name for it.
    public static func describe(_ uid: UInt32) -> String {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 1024)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, result != nil, let name = entry.pw_name
        else { return "uid \(uid)" }
        return "uid \(uid) (\(String(cString: name)))"
    }
}
