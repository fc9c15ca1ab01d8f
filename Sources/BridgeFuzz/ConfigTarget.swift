import BridgeConfig
import BridgeCore
import BridgeEvents
import BridgeDirectus
import BridgeActivity
import BridgeSinks

/// `bridge.yaml` text through `ConfigLoader.parse`: libyaml, the tree builder, `${VAR}` interpolation and the typed
/// decoder with every validation.
///
/// Input: the YAML, optionally preceded by environment lines (`NAME=value`, one per line) and a NUL byte. Files
/// (`token_file`, `secret_file`, `ca_file`, …) come from memory: any path reads as a short secret, except paths
/// containing `missing`, which do not exist.
///
/// Invariants:
/// - Parsing is deterministic: the same input gives the same configuration or the same issues.
/// - A refusal has at least one issue, each naming the file and a line within it (or just after it), lines
///   counted as YAML counts them — or naming the `DIRECTUS_BRIDGE__` variable that brought the value in, and a line
///   within that variable's value.
/// - An accepted configuration's dump (`description`, what `validate --print` shows) parses again, with no
///   environment, to a configuration whose dump is the same text.
enum ConfigTarget {
    static let target = FuzzTarget(
        name: "config",
        summary: "config loading: YAML + ${VAR} interpolation + validation; deterministic, dump parses back",
        run: run
    )

    /// Serves every path from memory.
    struct Files: ConfigFileSystem {
        func readFile(atPath path: String, use: ConfigFileUse) -> Result<[UInt8], ConfigFileProblem> {
            path.contains("missing")
                ? .failure(ConfigFileProblem(reason: "No such file or directory"))
                : .success(Array("secret-from-\(path)\n".utf8))
        }
    }

    /// `ConfigLoader.parse` with every sink type the bridge has and the in-memory files.
    static func parse(_ yaml: [UInt8], path: String, environment: [String: String]) -> Result<BridgeConfig, ConfigError> {
        ConfigLoader.parse(
            bytes: yaml,
            path: path,
            environment: environment,
            sinkTypes: SinkCatalog.configTypes,
            files: Files()
        )
    }

    /// At least as many lines as YAML counts in `text`: it breaks lines at LF, CR, NEL (C2 85), LS and PS
    /// (E2 80 A8/A9); counting each LF, CR, 85, A8 and A9 byte over-counts (CRLF, other uses of those bytes), which
    /// is fine for an upper bound.
    static func lineBound(_ text: some Sequence<UInt8>) -> Int {
        text.reduce(1) { $0 + ([0x0A, 0x0D, 0x85, 0xA8, 0xA9].contains($1) ? 1 : 0) }
    }

    static func run(_ bytes: UnsafeRawBufferPointer) {
        var yaml = Array(bytes)
        var environment = ["DIRECTUS_URL": "http://127.0.0.1:8055", "DIRECTUS_TOKEN": "token"]
        if let separator = yaml.firstIndex(of: 0) {
            for line in yaml[..<separator].split(separator: 0x0A) {
                let text = String(decoding: line, as: UTF8.self)
                guard let equals = text.firstIndex(of: "=") else { continue }
                environment[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            yaml = Array(yaml[(separator + 1)...])
        }
        let first = parse(yaml, path: "bridge.yaml", environment: environment)
        let second = parse(yaml, path: "bridge.yaml", environment: environment)
        require(first == second, "two parses of the same input differ")

        switch first {
        case .failure(let error):
            let lines = lineBound(yaml)
            require(!error.issues.isEmpty, "a refusal without an issue")
            for issue in error.issues {
                if let value = environment[issue.path], issue.path.hasPrefix(EnvironmentOverrides.prefix) {
                    let valueLines = lineBound(value.utf8)
                    require((1...(valueLines + 1)).contains(issue.line), "issue line \(issue.line) of \(issue.path)")
                    continue
                }
                require(issue.path == "bridge.yaml", "an issue names \(issue.path)")
                require((1...(lines + 1)).contains(issue.line), "issue line \(issue.line) of \(lines): \(issue)")
            }
        case .success(let config):
            let dump = config.description
            let reread = parse(Array(dump.utf8), path: "dump.yaml", environment: [:])
            switch reread {
            case .success(let again):
                require(again.description == dump, "the dump changed when read back:\n\(dump)\n---\n\(again.description)")
            case .failure(let error):
                fatalError("invariant broken: the dump does not parse back: \(error)\n\(dump)")
            }
        }
    }
}
