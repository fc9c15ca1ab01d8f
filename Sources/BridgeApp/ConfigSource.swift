public import BridgeConfig

/// Where a command's configuration comes from: the file of `-c`/`--config` (default `./bridge.yaml`) and the
/// `-s`/`--set KEY.PATH=VALUE` values over it (docs/configuration.md "Settings on the command line"). Shown as the
/// path in messages; a string literal is a path without settings.
public struct ConfigSource: Sendable, Equatable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The file.
    public var path: String
    /// The `--set` values, in the order given (of two for one key, the later wins).
    public var settings: [ConfigSetting]

    /// The file at `path`, with `settings` over it.
    public init(path: String, settings: [ConfigSetting] = []) {
        self.path = path
        self.settings = settings
    }

    public init(stringLiteral path: String) {
        self.init(path: path)
    }

    public var description: String { path }
}
