import BridgeSinks
import BridgeSystem
import Foundation
import Testing

@testable import BridgeCore

#if canImport(Glibc)
    import Glibc
#endif

/// A signal sent the moment the handlers exist must not be lost. The bridge logs its start-up warnings just before
/// it installs them, and a supervisor (or a test) that reacts to that line may signal at once; a SIGTERM ignored in
/// that window left the bridge running until it was killed.
@Suite(.serialized) struct SignalHandlersTests {
    /// SIGHUP (reopen) rather than SIGTERM: the same path, and a lost one cannot end the test process.
    @Test func aSignalRightAfterInstallingIsHandled() async throws {
        for round in 0..<20 {
            let reopen = ReopenRequests()
            let stop = ShutdownSignal()
            let handlers = try SignalHandlers(stop: stop, reopen: reopen, logger: .silent)
            kill(getpid(), SIGHUP)
            let deadline = ContinuousClock.now + .seconds(10)
            while reopen.current == 0 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            handlers.cancel()
            #expect(reopen.current == 1, "round \(round): the signal was lost")
            #expect(!stop.isTriggered)
        }
    }
}

extension SignalHandlersTests {
    /// SIGTERM starts the graceful shutdown; the same signal again within a second (a supervisor signalling the
    /// child and then its process group) is one request, not the "second signal" that exits at once.
    @Test func sigtermStopsAndARepeatWithinASecondIsOneRequest() async throws {
        let stop = ShutdownSignal()
        let handlers = try SignalHandlers(stop: stop, reopen: ReopenRequests(), logger: .silent)
        defer { handlers.cancel() }
        kill(getpid(), SIGTERM)
        kill(getpid(), SIGTERM)
        let deadline = ContinuousClock.now + .seconds(10)
        while !stop.isTriggered && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(stop.isTriggered)
    }
}
