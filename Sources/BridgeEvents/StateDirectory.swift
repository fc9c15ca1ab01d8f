package import BridgeSystem

/// `delivery.state_dir`: created on first use (with its parents), mode 0700 because it holds event bodies.
package enum StateDirectory {
    /// Creates `path` and any missing parent, 0700 whatever the umask; an existing directory is left as it is.
    package static func create(_ path: String) throws(SystemError) {
        try PrivateFile.createDirectory(path)
    }

    /// `directory/name`.
    package static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
