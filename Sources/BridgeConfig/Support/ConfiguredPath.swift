/// Configured file paths compared as the files they name, so that one file under two spellings is caught
/// (`out.ndjson`, `./out.ndjson` and its absolute path; `-` and `/dev/stdout`), and a sink's file inside
/// `delivery.state_dir` too. Lexical, like the kernel resolving the path from the working directory: `.`, `..` and
/// repeated slashes are folded; symbolic links are not followed, so `validate` reads nothing but the config.
package enum ConfiguredPath {
    /// What every name of the process's standard output resolves to.
    package static let standardOutput = "-"
    private static let standardOutputNames: Set<String> = ["-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"]

    /// Whether `path` names the process's standard output (`-`, `/dev/stdout`, …), which the NDJSON sink writes to
    /// as descriptor 1: `/dev/stdout` is a link into `/proc` that leads to no path when stdout is a pipe.
    package static func isStandardOutput(_ path: String) -> Bool { standardOutputNames.contains(path) }

    /// `path` as an absolute, folded path (relative paths start at `workingDirectory`), or `standardOutput`.
    package static func resolved(_ path: String, workingDirectory: String) -> String {
        if standardOutputNames.contains(path) { return standardOutput }
        var components: [Substring] = []
        let full = path.hasPrefix("/") ? path : workingDirectory + "/" + path
        for component in full.split(separator: "/", omittingEmptySubsequences: true) {
            switch component {
            case ".": continue
            case "..": _ = components.popLast()
            default: components.append(component)
            }
        }
        return "/" + components.joined(separator: "/")
    }

    /// Whether resolved path `path` lies inside resolved directory `directory` (not the directory itself).
    package static func isInside(_ path: String, directory: String) -> Bool {
        path != standardOutput && path.hasPrefix(directory == "/" ? "/" : directory + "/") && path != directory
    }
}
