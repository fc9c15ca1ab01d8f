import Foundation
import PackagePlugin

/// Generates `BuildInfo.swift` with the package version and the git commit, so `directus-bridge --version` can
/// say exactly what was built. It re-runs whenever git's HEAD log changes (every commit, checkout or reset).
@main
struct BuildInfoPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let root = context.package.directoryURL
        let output = context.pluginWorkDirectoryURL.appending(path: "BuildInfo.swift")
        var inputs: [URL] = [root.appending(path: "VERSION")]
        if let gitDirectory = Self.gitDirectory(root: root) {
            inputs.append(gitDirectory.appending(path: "logs/HEAD"))
            inputs.append(gitDirectory.appending(path: "HEAD"))
        }
        let script = """
            version=$(cat "\(root.path)/VERSION" 2>/dev/null | tr -d '[:space:]')
            commit=$(git -C "\(root.path)" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
            if [ -n "$(git -C "\(root.path)" status --porcelain --untracked-files=no 2>/dev/null)" ]; then commit="$commit-dirty"; fi
            printf 'package enum BuildInfo {\\n    package static let version = "%s"\\n    package static let commit = "%s"\\n}\\n' \
              "${version:-0.0.0}" "$commit" > "\(output.path)"
            """
        return [
            .buildCommand(
                displayName: "Generating BuildInfo.swift (version, git commit)",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", script],
                inputFiles: inputs.filter { FileManager.default.fileExists(atPath: $0.path) },
                outputFiles: [output])
        ]
    }

    /// The git directory of the checkout: `.git` itself, or the directory a worktree's `.git` file points to.
    static func gitDirectory(root: URL) -> URL? {
        let dotGit = root.appending(path: ".git")
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: dotGit.path, isDirectory: &isDirectory) else { return nil }
        if isDirectory.boolValue { return dotGit }
        guard let text = try? String(contentsOf: dotGit, encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("gitdir:") })
        else { return nil }
        let path = line.dropFirst("gitdir:".count).trimmingCharacters(in: .whitespaces)
        return path.hasPrefix("/") ? URL(fileURLWithPath: path) : root.appending(path: path)
    }
}
