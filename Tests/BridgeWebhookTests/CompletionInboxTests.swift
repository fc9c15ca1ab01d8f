import BridgeHTTP
import Testing

@testable import BridgeSinks

/// When the engine's finished attempts wake the delivery loop (`CompletionInbox`): at once when the engine may run
/// out of queued attempts or an attempt did not get a 2xx, otherwise once `maxInFlight` outcomes wait.
@Suite struct CompletionInboxTests {
    private static func completion(_ tag: Int64, status: Int = 204) -> DeliveryReceiver.Completion {
        DeliveryReceiver.Completion(tag: tag, result: .success(HTTPResponse(status: status)), sent: true)
    }

    @Test func successesWaitWhileTheEngineHasAttemptsQueuedUntilMaxInFlightOfThemDo() {
        let inbox = CompletionInbox(maxInFlight: 8)
        inbox.handedOut(32)  // 8 running, 24 queued behind them
        #expect(inbox.mayHoldBack)
        for tag in 1...7 { #expect(!inbox.file([Self.completion(Int64(tag))])) }
        #expect(inbox.file([Self.completion(8)]))
        #expect(inbox.take().map(\.tag) == Array(1...8))
        // 24 left: the next ones wait again; 16 left, the engine may run out, so each wakes the loop.
        #expect(!inbox.file((9...15).map { Self.completion($0) }))
        #expect(inbox.file([Self.completion(16)]))
        #expect(inbox.take().count == 8)
        #expect(!inbox.mayHoldBack)
        #expect(inbox.file([Self.completion(17)]))
        #expect(inbox.outstanding == 15)
    }

    @Test func anAttemptWithoutA2xxWakesTheLoopAtOnce() {
        let inbox = CompletionInbox(maxInFlight: 8)
        inbox.handedOut(64)
        #expect(!inbox.file([Self.completion(1), Self.completion(2, status: 200)]))
        #expect(inbox.file([Self.completion(3, status: 503)]))
        #expect(inbox.file([Self.completion(4, status: 301)]))
        let cancelled = HTTPClientError(kind: .cancelled, message: "request cancelled", url: "http://127.0.0.1/")
        #expect(inbox.file([DeliveryReceiver.Completion(tag: 5, result: .failure(cancelled), sent: false)]))
        #expect(inbox.take().map(\.tag) == [1, 2, 3, 4, 5])
        #expect(inbox.mayHoldBack)
    }
}
