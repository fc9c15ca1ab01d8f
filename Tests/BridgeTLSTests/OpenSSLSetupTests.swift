import BridgeTLS
import Testing

/// OpenSSL's setup before main (Sources/COpenSSLInit/openssl_init.c) is linked into every binary that uses BridgeTLS,
/// this test runner included, and took effect before any library initialised OpenSSL by itself. Without it, a thread
/// ending while the process exits leaves OpenSSL's per-thread state to LeakSanitizer (scripts/test.sh checks that on
/// Tests/sanitizers/openssl_exit_check.c).
@Suite struct OpenSSLSetupTests {
    @Test func openSSLKeepsItsStateUntilTheProcessIsGone() {
        #expect(OpenSSLLibrary.keepsStateAtExit)
    }
}
