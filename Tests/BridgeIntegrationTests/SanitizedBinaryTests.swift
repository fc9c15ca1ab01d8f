import BridgeTestSupport
import Foundation
import Testing

/// `scripts/test.sh --sanitize=…` runs the integration suite to check the sanitized `directus-bridge`: the binary the
/// tests start must be the one built with the tests, with the same sanitizer (docs/RELIABILITY.md "Sanitizers").
@Suite struct SanitizedBinaryTests {
    /// Whether this test process runs under `runtime` (the symbol resolves in it; `nil` is RTLD_DEFAULT).
    static func running(_ runtime: String) -> Bool { dlsym(nil, runtime) != nil }

    /// On Linux `Bundle.main.bundleURL` is the test runner's own directory, not a bundle inside it: the binary was
    /// looked for one level too high, never found, and `.build/debug/directus-bridge` (a plain build, possibly an
    /// old one) ran in every sanitizer run.
    @Test func theBridgeIsBuiltWithTheSanitizerTheTestsRunUnder() throws {
        guard ProcessInfo.processInfo.environment["BRIDGE_BINARY"] == nil else { return }
        let inBinary = try TestEnvironment.bridgeSanitizers()
        for runtime in TestEnvironment.sanitizerMarkers {
            #expect(inBinary.contains(runtime) == Self.running(runtime), "\(TestEnvironment.bridgeBinary): \(runtime)")
        }
    }
}
