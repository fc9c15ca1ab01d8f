internal import CMosquitto

/// The libmosquitto the bridge runs with, for `--version`.
package enum MQTTLibrary {
    /// The library's name as `--version` shows it.
    package static let name = "libmosquitto"
    /// The version the library reports at run time (`2.0.11`).
    package static var version: String {
        var major: Int32 = 0
        var minor: Int32 = 0
        var revision: Int32 = 0
        _ = mosquitto_lib_version(&major, &minor, &revision)
        return "\(major).\(minor).\(revision)"
    }
}
