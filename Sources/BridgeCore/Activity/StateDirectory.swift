import BridgeSystem

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// `delivery.state_dir`: created on first use (with its parents), mode 0700 because it holds event bodies.
enum StateDirectory {
    /// Creates `path` and any missing parent; an existing directory is fine.
    static func create(_ path: String) throws(SystemError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") where !component.isEmpty {
            prefix += component
            if mkdir(prefix, 0o700) != 0 {
                let code = errno
                if code != EEXIST { throw SystemError(operation: "mkdir \(prefix)", errno: code) }
            }
            prefix += "/"
        }
    }

    /// `directory/name`.
    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
