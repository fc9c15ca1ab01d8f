import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Makes a file or directory unwritable for this process and the bridge it starts, as an operator's `chmod 0444`
/// (or a read-only mount) does for a bridge running as an ordinary user.
///
/// As root, mode bits do not stop a write (CAP_DAC_OVERRIDE), so there the immutable attribute is set instead
/// (`chattr +i`: refused even to root). Where neither works (root on a file system without attributes, or without
/// CAP_LINUX_IMMUTABLE), `isSupported` is false and the tests that need it are not run.
public final class UnwritablePath {
    /// The path made unwritable.
    public let path: String
    private let usesAttribute: Bool
    private let originalMode: mode_t

    /// Makes `path` unwritable until `restore()` (or the end of this value).
    public init(_ path: String) throws {
        var status = stat()
        guard stat(path, &status) == 0 else { throw CocoaError(.fileNoSuchFile) }
        self.path = path
        originalMode = status.st_mode & 0o7777
        usesAttribute = geteuid() == 0
        if usesAttribute {
            guard Self.chattr("+i", path) else { throw CocoaError(.featureUnsupported) }
        } else {
            chmod(path, (status.st_mode & S_IFMT) == S_IFDIR ? 0o555 : 0o444)
        }
    }

    /// Makes the path writable again.
    public func restore() {
        if usesAttribute {
            _ = Self.chattr("-i", path)
        } else {
            chmod(path, originalMode)
        }
    }

    deinit { restore() }

    /// Whether this machine can make a path unwritable for this process (see the type's comment).
    public static let isSupported: Bool = {
        guard geteuid() == 0 else { return true }
        guard let directory = try? TestEnvironment.makeTemporaryDirectory(prefix: "unwritable-probe") else {
            return false
        }
        let probe = directory.appendingPathComponent("probe").path
        guard FileManager.default.createFile(atPath: probe, contents: Data()), chattr("+i", probe) else { return false }
        let descriptor = open(probe, O_WRONLY)
        if descriptor >= 0 { close(descriptor) }
        _ = chattr("-i", probe)
        return descriptor < 0
    }()

    private static func chattr(_ flag: String, _ path: String) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/chattr")
        process.arguments = [flag, path]
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        return ChildExit.wait(process) == 0
    }
}
