internal import CNats

/// The version of libnats (the NATS C client) this process runs with, as the library reports it:
/// `nats_GetVersion()`, the version linked at run time (`--version` shows it), not the headers' at build time.
package enum NATSLibrary {
    /// The library's name as `--version` shows it.
    package static let name = "libnats"
    /// The version text (`1.2.3`).
    package static var version: String { String(cString: nats_GetVersion()) }
}
