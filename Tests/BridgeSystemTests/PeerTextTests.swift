import BridgeSystem
import Testing

/// Text from peers and C libraries: control characters cannot forge log lines, length is bounded.
@Suite struct PeerTextTests {
    @Test func peerTextIsCleanedAndBounded() {
        #expect(PeerText.sanitized("line\none\u{7}\u{0}end") == "line one  end")
        let long = PeerText.sanitized(String(repeating: "é", count: 1_000))
        #expect(long.utf8.count <= PeerText.defaultMaximumLength + "…".utf8.count && long.hasSuffix("…"))
        #expect(PeerText.sanitized("short", maximumLength: 3) == "sho…")
        #expect(PeerText.string(nil) == "")
    }
}
