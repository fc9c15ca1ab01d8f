import BridgeConfig
import BridgeCore
import BridgeEvents
import BridgeDirectus
import BridgeActivity
import BridgeSinks

/// Files served from memory, so loader tests never depend on the machine.
struct InMemoryFiles: ConfigFileSystem {
    var files: [String: [UInt8]] = [:]

    init(_ files: [String: String] = [:]) {
        self.files = files.mapValues { Array($0.utf8) }
    }

    func readFile(atPath path: String, use: ConfigFileUse) -> Result<[UInt8], ConfigFileProblem> {
        guard let bytes = files[path] else { return .failure(ConfigFileProblem(reason: "No such file or directory")) }
        return .success(bytes)
    }
}

/// A valid configuration with only the required keys (plus a token).
let minimalYAML = """
    directus:
      url: http://127.0.0.1:8055
      auth:
        token: secret-token
    subscriptions:
      - collection: articles
    sinks:
      - type: ndjson

    """

/// Parses `yaml` named `bridge.yaml`.
func parse(
    _ yaml: String,
    environment: [String: String] = [:],
    files: InMemoryFiles = InMemoryFiles()
) -> Result<BridgeConfig, ConfigError> {
    ConfigLoader.parse(
        text: yaml, path: "bridge.yaml", environment: environment, sinkTypes: SinkCatalog.configTypes, files: files)
}

/// The issue lines for `yaml`, or `["<valid>"]` when it parses.
func issues(
    _ yaml: String,
    environment: [String: String] = [:],
    files: InMemoryFiles = InMemoryFiles()
) -> [String] {
    switch parse(yaml, environment: environment, files: files) {
    case .success: ["<valid>"]
    case .failure(let error): error.issues.map(\.description)
    }
}

/// The configuration for `yaml`, failing the test with the issues when it does not parse.
func config(
    _ yaml: String,
    environment: [String: String] = [:],
    files: InMemoryFiles = InMemoryFiles()
) throws -> BridgeConfig {
    switch parse(yaml, environment: environment, files: files) {
    case .success(let config): return config
    case .failure(let error): throw error
    }
}

extension String {
    /// `self` with `old` replaced by `new` exactly once (a test typo in `old` would otherwise pass silently).
    func replacingOnce(_ old: String, with new: String) -> String {
        guard let range = firstRange(of: old) else { fatalError("\"\(old)\" is not in the text") }
        var copy = self
        copy.replaceSubrange(range, with: new)
        return copy
    }
}
