internal import CHiredis

/// The version of hiredis the bridge was built against, for `--version`. hiredis has no call that reports its version
/// at run time, as the other linked libraries do; its headers' version is the one Debian's libhiredis package of
/// the same release ships (the soname, libhiredis.so.0.14, pins the minor version).
package enum RedisLibrary {
    /// The library's name as `--version` shows it.
    package static let name = "hiredis"
    /// The version text (`0.14.1`).
    package static var version: String { "\(HIREDIS_MAJOR).\(HIREDIS_MINOR).\(HIREDIS_PATCH)" }
}
