import CYAML

/// The version of libyaml this process runs with, as the library itself reports it (`yaml_get_version_string()`): the
/// version linked at run time, which `--version` shows, not the one the headers had at build time.
package enum YAMLLibrary {
    /// The library's name as `--version` shows it.
    package static let name = "libyaml"
    /// The version text (`1.2.3`).
    package static var version: String { String(cString: yaml_get_version_string()) }
}
