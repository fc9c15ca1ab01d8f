import BridgeSystem
import Testing

@testable import BridgeEvents

/// glibc's `backtrace(3)` (execinfo.h, which the Glibc module does not export).
@_silgen_name("backtrace")
private func backtrace(_ buffer: UnsafeMutablePointer<UnsafeMutableRawPointer?>, _ size: Int32) -> Int32

/// `HealthState` is read on every activity page and every `/readyz`/`/metrics` request, for as long as the bridge
/// runs: a read must leave nothing behind.
@Suite struct HealthStateTests {
    /// How many frames deep the stack is where it is called. Counted with `backtrace(3)` rather than from a
    /// local's address: AddressSanitizer may put escaping locals on a fake stack of its own.
    @inline(never) static func stackDepthMarker() -> Int64 {
        var frames = [UnsafeMutableRawPointer?](repeating: nil, count: 65_536)
        return Int64(backtrace(&frames, Int32(frames.count)))
    }

    /// A closure stored directly as a `Mutex`'s value is reabstracted on the way into `withLock`'s generic `inout`
    /// and written back wrapped in thunks even when the body only reads it (swiftlang/swift#91348): every read of
    /// the snapshot wrapped the lag reader in two more thunks. Memory grew with every activity page (the soak's
    /// climbing heap, docs/RELIABILITY.md "Soak"), each read got slower, and calling the lag reader went one
    /// thunk pair deeper each time until the stack overflowed. The reader must run as deep after many reads as
    /// after the first.
    @Test func readingTheSnapshotLeavesTheSinkLagReaderAsItWas() {
        let health = HealthState(expectedSubscriptions: [])
        health.setSinkLag { ["depth": Self.stackDepthMarker()] }
        // One synchronous stretch: every read runs on this thread from this frame.
        let first = health.snapshot.sinkLag["depth"]
        for _ in 0..<2_000 { _ = health.snapshot }
        let last = health.snapshot.sinkLag["depth"]
        let deeper = (last ?? 0) - (first ?? 0)
        // With the thunk chain 2 000 reads put the reader 4 000 frames deeper.
        #expect(first != nil && abs(deeper) < 16, "the lag reader ran \(deeper) frames deeper after 2 000 reads")
    }
}

extension HealthStateTests {
    /// A task waiting for a state (the live benchmark, for the connection) is woken by the update that makes it, not
    /// by a poll: the ring is remembered even when it comes before the wait. Without it the wait below lasts a day
    /// and the time limit fails the test.
    @Test(.timeLimit(.minutes(10))) func everyUpdateRingsChanged() async {
        let health = HealthState(expectedSubscriptions: [])
        health.update { $0.connected = true }
        await health.changed.wait(timeout: .seconds(86_400))
        #expect(health.snapshot.connected)
    }
}
