import CYAML

/// The version of libyaml this process runs with, as the library reports it:
/// `yaml_get_version_string()`, the version linked at run time (`--version` shows it), not the headers' at build time.
package enum YAMLLibrary {
    /// The library's name as `--version` shows it.
    package static let name = "libyaml"
    /// The version text (`1.2.3`).
    package static var version: String { String(cString: yaml_get_version_string()) }
}
