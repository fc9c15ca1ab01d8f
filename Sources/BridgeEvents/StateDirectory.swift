package import BridgeSystem

/// `delivery.state_dir`: created on first use (with its parents), mode 0700 because it holds event bodies, and never
/// used when another local user controls it (docs/RELIABILITY.md, "Files another user controls").
package enum StateDirectory {
    /// Creates `path` and any missing parent, 0700 whatever the umask (an existing directory keeps its mode), after
    /// checking that what exists of it is safe to create the rest in; then refuses the directory when another user
    /// owns it, group or others may write it, or a link of another user's leads to it (`UnsafePathError`).
    package static func prepare(_ path: String, trust: PathTrust = .current) throws {
        try OwnedPath.checkDirectory(path, rule: .privateDirectory, allowMissing: true, trust: trust)
        try PrivateFile.createDirectory(path)
        try OwnedPath.checkDirectory(path, rule: .privateDirectory, trust: trust)
    }

    /// `directory/name`.
    package static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
