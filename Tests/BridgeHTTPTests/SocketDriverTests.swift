import BridgeSystem
import BridgeTestSupport
import Synchronization
import Testing

@testable import BridgeHTTP

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The delivery driver on `curl_multi_socket_action`: curl's sockets in an epoll set, its timer as the wait's limit,
/// the queue's eventfd beside the sockets. Each engine here sleeps up to 10 minutes between turns (not the usual
/// second), so whatever should end a sleep — a socket, curl's timer, the wake-up — is the only thing that can: a
/// driver that missed one would leave the request hanging past the wait below, and the test fails.
@Suite(.serialized, .timeLimit(.minutes(3)))  // its own peers start slowly on a loaded box (docs/RELIABILITY.md)
struct SocketDriverTests {
    let peer: HTTPPeer

    init() async throws {
        peer = try await HTTPPeer()
    }

    /// An engine whose driver never turns on its own within a test.
    func sleepyEngine(maxInFlight: Int) throws -> HTTPDeliveryEngine {
        var configuration = HTTPDeliveryEngine.Configuration(maxInFlight: maxInFlight)
        configuration.longestSleepMilliseconds = 600_000
        return try HTTPDeliveryEngine(configuration: configuration)
    }

    /// Submits `request` alone and waits (up to ≈ 60 s at load) for its one outcome.
    func deliver(_ request: HTTPRequest, on engine: HTTPDeliveryEngine) async throws -> DeliveryReceiver.Completion? {
        let collector = CompletionCollector()
        engine.submit([(0, request)], to: DeliveryReceiver { collector.add($0) })
        try await waitUntil(attempts: Int(3000 * TestEnvironment.patience)) { collector.count == 1 }
        return collector.all.first
    }

    /// A kept-alive connection's socket leaves curl's watch list when its transfer ends (CURL_POLL_REMOVE) and comes
    /// back with the next transfer on it; a closed connection's socket leaves it for good, and the next connection's
    /// socket (often with the same number) is added. Requests alternate between closing and keeping the connection.
    @Test func socketsCurlRemovesAndAddsAgainAreWatchedEachTime() async throws {
        let engine = try sleepyEngine(maxInFlight: 1)
        for index in 0..<8 {
            let headers: [(String, String)] = index % 2 == 0 ? [("Connection", "close")] : []
            let request = HTTPRequest(url: peer.url("/status/200"), headers: headers, timeout: .seconds(600))
            let outcome = try await deliver(request, on: engine)
            #expect((try? outcome?.result.get().status) == 200, "request \(index)")
        }
        await engine.shutdown()
        let stats = try await peer.stats()
        #expect(stats.requests == 8)
        // Each closing request ends its connection: the first on its own, the others after one kept-alive request.
        #expect(stats.connections == 5)
    }

    /// A receiver that never answers: nothing happens on the socket and nobody rings the queue, so only curl's timer
    /// (CURLMOPT_TIMERFUNCTION as `epoll_wait`'s limit) ends the sleep, and the request fails as a timeout. The one
    /// wake-up is the submission's.
    @Test func aReceiverThatNeverAnswersIsTimedOutByCurlsTimerAlone() async throws {
        let engine = try sleepyEngine(maxInFlight: 4)
        let before = engine.driverWakeUps
        let outcome = try await deliver(HTTPRequest(url: peer.url("/hang"), timeout: .seconds(1)), on: engine)
        #expect(outcome.map { if case .failure(let error) = $0.result { error.kind == .timeout } else { false } } == true)
        #expect(engine.driverWakeUps == before + 1)
        // The driver goes on after it: the timed-out socket was closed and forgotten, a new one is watched.
        let next = try await deliver(HTTPRequest(url: peer.url("/status/204")), on: engine)
        #expect((try? next?.result.get().status) == 204)
        await engine.shutdown()
    }

    /// A driver asleep in `epoll_wait` with nothing to watch is woken by a submission from another thread: the
    /// queue's ring on the eventfd in the same epoll set.
    @Test func aSubmissionFromAnotherThreadWakesTheSleepingDriver() async throws {
        let engine = try sleepyEngine(maxInFlight: 4)
        let first = try await deliver(HTTPRequest(url: peer.url("/status/200")), on: engine)
        #expect((try? first?.result.get().status) == 200)
        // Long enough for the driver to be asleep again (and, were it not, the ring would still wait for it).
        try await Task.sleep(for: .milliseconds(200))
        let collector = CompletionCollector()
        let receiver = DeliveryReceiver { collector.add($0) }
        let before = engine.driverWakeUps
        let submitter = try DetachedThread.startJoinable {
            engine.submit([(7, HTTPRequest(url: peer.url("/status/201")))], to: receiver)
        }
        submitter.join()
        try await waitUntil(attempts: Int(3000 * TestEnvironment.patience)) { collector.count == 1 }
        #expect(collector.all.map(\.tag) == [7])
        #expect((try? collector.all.first?.result.get().status) == 201)
        #expect(engine.driverWakeUps == before + 1)
        await engine.shutdown()
    }
}

/// What curl's socket callback does to the epoll set (`CurlSocketEvents`), without curl: each report changes the
/// set once, a removed socket is forgotten, and one that comes back is watched again.
@Suite struct CurlSocketEventsTests {
    // curl/multi.h's CURL_POLL_* values (the tests do not import CCurl).
    let pollIn: Int32 = 1
    let pollOut: Int32 = 2
    let pollInOut: Int32 = 3
    let pollRemove: Int32 = 4

    /// Calls the socket callback as curl does.
    func report(_ events: CurlSocketEvents, _ socket: Int32, _ what: Int32) {
        #expect(curlSocketCallback(nil, socket, what, Unmanaged.passUnretained(events).toOpaque(), nil) == 0)
    }

    /// The sockets `events.poll` reports ready now (a wait that does not sleep).
    func ready(_ events: CurlSocketEvents) throws -> [Int32: EventPoll.Events] {
        var found: [Int32: EventPoll.Events] = [:]
        try events.poll.wait(timeoutMilliseconds: 0) { found[$0] = $1 }
        return found
    }

    func socketPair() throws -> (Int32, Int32) {
        var ends: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        return (ends[0], ends[1])
    }

    /// Puts a fresh socket in the place of the open socket `number` (as if curl closed it and a new one got its
    /// number; `dup2` replaces it at once, so no other thread's descriptor can take the number between): returns
    /// the new socket's other end.
    func reopen(at number: Int32) throws -> Int32 {
        let (fresh, other) = try socketPair()
        try #require(dup2(fresh, number) == number)
        close(fresh)
        return other
    }

    func send(_ socket: Int32) {
        var byte: UInt8 = 1
        #expect(write(socket, &byte, 1) == 1)
    }

    func receive(_ socket: Int32) {
        var byte: UInt8 = 0
        #expect(read(socket, &byte, 1) == 1)
    }

    /// A kept-alive connection's socket stays in the epoll set between transfers (no `epoll_ctl` out and back in),
    /// is dropped when it turns up ready while idle, and is forgotten when curl closes it, so that a new socket with
    /// its number is added.
    @Test func aConnectionsSocketStaysBetweenTransfersAndIsForgottenWhenClosed() throws {
        let events = try CurlSocketEvents()
        let context = Unmanaged.passUnretained(events).toOpaque()
        var (socket, other) = try socketPair()
        defer {
            close(socket)
            close(other)
        }
        events.connectionOpened(socket)
        report(events, socket, pollIn)
        #expect(events.watchedSockets == 1)
        report(events, socket, pollRemove)  // the transfer ended; curl keeps the connection
        #expect(events.watchedSockets == 0 && events.registeredSockets == 1)
        report(events, socket, pollIn)  // the next transfer on it
        send(other)
        #expect(try ready(events)[socket] == .readable)
        #expect(events.isWatched(socket))
        receive(socket)
        report(events, socket, pollInOut)
        #expect(try ready(events)[socket] == .writable)
        report(events, socket, pollRemove)  // registered for writing: it leaves the set
        #expect(events.registeredSockets == 0)
        #expect(try ready(events).isEmpty)
        // Idle, then ready (the server closed it): dropped, not reported again.
        report(events, socket, pollIn)
        report(events, socket, pollRemove)
        send(other)
        #expect(try ready(events)[socket] == .readable)
        #expect(!events.isWatched(socket) && events.registeredSockets == 0)
        #expect(try ready(events).isEmpty)
        receive(socket)
        // Idle, then closed by curl: forgotten (were it not, a new socket that got its number would be taken for one
        // in the set and never added), and the next connection's socket is added.
        report(events, socket, pollIn)
        report(events, socket, pollRemove)
        #expect(curlCloseSocketCallback(context, socket) == 0)
        #expect(events.registeredSockets == 0)
        close(other)
        // A new pair (the number may go to another test's thread meanwhile: never `dup2` onto a free number).
        (socket, other) = try socketPair()
        events.connectionOpened(socket)
        report(events, socket, pollIn)
        send(other)
        #expect(try ready(events)[socket] == .readable)
        #expect(events.isWatched(socket))
        #expect(events.lastFailure == nil)
    }

    /// A socket curl did not open through the handles (the threaded resolver's, which curl closes itself) leaves the
    /// set at its REMOVE: one closed without a word and a new one at its number would otherwise never be added.
    @Test func anotherSocketLeavesTheSetAtItsRemove() throws {
        let events = try CurlSocketEvents()
        var (socket, other) = try socketPair()
        defer {
            close(socket)
            close(other)
        }
        report(events, socket, pollIn)
        report(events, socket, pollIn)  // told again: no change
        #expect(events.watchedSockets == 1)
        report(events, socket, pollRemove)
        #expect(events.registeredSockets == 0)
        close(other)
        other = try reopen(at: socket)  // closed by curl itself; the number comes back
        report(events, socket, pollOut)
        #expect(try ready(events)[socket] == .writable)
        #expect(events.watchedSockets == 1)
    }

    @Test func curlsTimerIsADeadlineTakenOnce() throws {
        let events = try CurlSocketEvents()
        let context = Unmanaged.passUnretained(events).toOpaque()
        #expect(events.millisecondsToTimer(limit: 1000) == 1000)  // no timer: the caller's limit
        #expect(!events.takeDueTimer())
        #expect(curlTimerCallback(nil, 0, context) == 0)  // "run the timeouts now"
        #expect(events.millisecondsToTimer(limit: 1000) == 0)
        #expect(events.takeDueTimer())
        #expect(!events.takeDueTimer())  // taken: curl sets the next one
        #expect(curlTimerCallback(nil, 5000, context) == 0)
        let now = ContinuousClock.now
        #expect((4000...5000).contains(events.millisecondsToTimer(limit: 600_000, now: now)))
        #expect(events.millisecondsToTimer(limit: 100, now: now) == 100)
        #expect(!events.takeDueTimer(now: now))
        #expect(events.takeDueTimer(now: now + .seconds(6)))
        #expect(curlTimerCallback(nil, 5000, context) == 0)
        #expect(curlTimerCallback(nil, -1, context) == 0)  // removed
        #expect(events.millisecondsToTimer(limit: 1000) == 1000)
        #expect(!events.takeDueTimer(now: now + .seconds(60)))
    }
}
