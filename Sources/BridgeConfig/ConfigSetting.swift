/// `--set KEY.PATH=VALUE` on the command line (docs/configuration.md "Settings on the command line"), as Redpanda
/// Connect's and Benthos's `--set`: one value of `bridge.yaml`, over the file's and the `DIRECTUS_BRIDGE__…`
/// variables'. Dots separate the keys (written as in the file: `delivery.state_dir`), a number is a list position
/// (`sinks.0.path`), and the value is read as YAML (`5s`, `true`, `["kafka-1:9092"]`), not interpolated again.
public struct ConfigSetting: Sendable, Equatable {
    /// The keys and list positions (`["sinks", "0", "path"]`).
    public let path: [String]
    /// The value text.
    public let value: String

    /// Parses `sinks.0.path=/data/out.ndjson`: nil unless it is KEY.PATH=VALUE without an empty key (`a..b`, `.a`).
    /// The value may be empty (an empty string) and may hold `=` and dots.
    public init?(_ argument: String) {
        guard let equals = argument.firstIndex(of: "=") else { return nil }
        let path = argument[..<equals].split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !path.contains(where: \.isEmpty) else { return nil }
        self.path = path
        self.value = String(argument[argument.index(after: equals)...])
    }

    /// As an override of the file: `--set sinks.0.path` names it where it cannot apply.
    var override: EnvironmentOverrides.Override {
        EnvironmentOverrides.Override(variable: "--set " + path.joined(separator: "."), path: path, value: value)
    }
}
