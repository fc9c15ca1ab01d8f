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

    /// `scripts/test.sh` exports `LSAN_OPTIONS` with `lsan.supp` for the test runner; a bridge the tests start gets
    /// the other options only, so LeakSanitizer reports every leak of the bridge (`BridgeProcess` starts it with
    /// this environment).
    @Test func bridgesStartWithoutLeakSuppressions() {
        let runner = [
            "LSAN_OPTIONS": "suppressions=/repo/Tests/sanitizers/lsan.supp:print_suppressions=0",
            "ASAN_OPTIONS": "detect_leaks=1", "PATH": "/usr/bin",
        ]
        let bridge = TestEnvironment.bridgeEnvironment(runner)
        #expect(bridge["LSAN_OPTIONS"] == "print_suppressions=0")
        #expect(bridge["ASAN_OPTIONS"] == "detect_leaks=1")
        #expect(bridge["PATH"] == "/usr/bin")
        #expect(TestEnvironment.bridgeEnvironment(["LSAN_OPTIONS": "suppressions=/x"])["LSAN_OPTIONS"] == nil)
        // The integration runner's own leaks go unchecked (scripts/test.sh); a bridge's never do.
        let integrationRunner = ["LSAN_OPTIONS": "suppressions=/x:print_suppressions=0:detect_leaks=0"]
        #expect(TestEnvironment.bridgeEnvironment(integrationRunner)["LSAN_OPTIONS"] == "print_suppressions=0")
        #expect(TestEnvironment.bridgeEnvironment().values.allSatisfy { !$0.contains("lsan.supp") })
    }
}
