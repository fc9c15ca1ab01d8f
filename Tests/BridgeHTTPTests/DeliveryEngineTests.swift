import BridgeSystem
import BridgeTestSupport
import Foundation
import Synchronization
import Testing

@testable import BridgeHTTP

/// What only the multi-handle engine does: many transfers at once, limits, shutdown.
@Suite(.serialized, .timeLimit(.minutes(3)))  // its own peers start slowly on a loaded box (docs/RELIABILITY.md)
struct DeliveryEngineTests {
    let peer: HTTPPeer

    init() async throws {
        peer = try await HTTPPeer()
    }

    /// A driver thread the system refuses (its thread limit) is a thrown `SystemError`, not a trap; the driver
    /// started before it stops with the engine, and an engine that could start serves requests as before.
    @Test func aRefusedDriverThreadIsAnError() async throws {
        let starts = StartCount()
        let secondRefused: DetachedThread.Starter = { body throws(SystemError) in
            guard starts.value.add(1, ordering: .relaxed).newValue == 1 else {
                throw SystemError(operation: "starting a thread (pthread_create)", errno: EAGAIN)
            }
            try DetachedThread.start(stackSize: nil, body)
        }
        #expect {
            try HTTPDeliveryEngine(configuration: .init(maxInFlight: 4, drivers: 2), threadStarter: secondRefused)
        } throws: { error in
            (error as? SystemError).map { $0.errno == EAGAIN && $0.isRetriable } ?? false
        }
        let engine = try HTTPDeliveryEngine(configuration: .init(maxInFlight: 4, drivers: 2))
        #expect(try await engine.send(HTTPRequest(method: "GET", url: peer.url("/status/204"))).status == 204)
        await engine.shutdown()
    }

    @Test func sixtyFourConcurrentRequestsAllSucceedAndOverlap() async throws {
        let engine = try HTTPDeliveryEngine(configuration: .init(maxInFlight: 64))
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<64 {
                group.addTask {
                    // The peer holds every request until all 64 are held at once, so success proves overlap.
                    let request = HTTPRequest(
                        method: "POST",
                        url: peer.url("/barrier?n=64"),
                        body: Array("\(index)".utf8)
                    )
                    return try await engine.send(request).status
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        await engine.shutdown()
        #expect(statuses.count == 64)
        #expect(statuses.allSatisfy { $0 == 200 })
        let stats = try await peer.stats()
        #expect(stats.requests == 64)
        #expect(stats.max_concurrency == 64)
    }

    @Test func maxInFlightBoundsConcurrencyAndConnectionsAreReused() async throws {
        let engine = try HTTPDeliveryEngine(configuration: .init(maxInFlight: 4))
        try await sendTwoRoundsOfTwentySlowRequests(engine)
        await engine.shutdown()
        let stats = try await peer.stats()
        #expect(stats.requests == 40)
        #expect(stats.max_concurrency == 4)
        #expect(stats.connections == 4)  // 40 requests over the same four keep-alive connections
    }

    @Test func hostConnectionLimitQueuesInsideCurl() async throws {
        let engine = try HTTPDeliveryEngine(configuration: .init(maxInFlight: 16, maxHostConnections: 2))
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<12 {
                group.addTask { try await engine.send(HTTPRequest(url: peer.url("/slow?ms=50"))).status }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        await engine.shutdown()
        #expect(statuses == Array(repeating: 200, count: 12))
        let stats = try await peer.stats()
        #expect(stats.max_concurrency == 2)
        #expect(stats.connections == 2)
    }

    @Test func shutdownAbortsInFlightAndWaitingRequests() async throws {
        let engine = try HTTPDeliveryEngine(configuration: .init(maxInFlight: 2))
        let results = Task {
            await withTaskGroup(of: HTTPClientError.Kind?.self) { group in
                for _ in 0..<5 {
                    group.addTask {
                        do {
                            _ = try await engine.send(HTTPRequest(url: peer.url("/hang"), timeout: .seconds(30)))
                            return nil
                        } catch let error as HTTPClientError {
                            return error.kind
                        } catch {
                            return .other
                        }
                    }
                }
                return await group.reduce(into: [HTTPClientError.Kind?]()) { $0.append($1) }
            }
        }
        try await waitUntil { try await peer.stats().in_flight >= 2 }
        try await Task.sleep(for: .milliseconds(100))
        #expect(try await peer.stats().in_flight == 2)  // two running, three waiting for a slot
        await engine.shutdown()
        let kinds = await results.value
        #expect(kinds == Array(repeating: .cancelled, count: 5))
        let late = await expectHTTPError { try await engine.send(HTTPRequest(url: peer.url("/status/200"))) }
        #expect(late?.kind == .cancelled)
        try await waitUntil { try await peer.stats().in_flight == 0 }
        #expect(try await peer.stats().in_flight == 0)
        await engine.shutdown()  // a second shutdown returns at once
    }

    @Test func cancellingOneRequestLeavesTheOthersRunning() async throws {
        let engine = try HTTPDeliveryEngine()
        let hanging = Task { try await engine.send(HTTPRequest(url: peer.url("/hang"), timeout: .seconds(30))) }
        let slow = Task { try await engine.send(HTTPRequest(url: peer.url("/slow?ms=300"))) }
        try await waitUntil { try await peer.stats().in_flight == 2 }
        hanging.cancel()
        let error = await expectHTTPError { try await hanging.value }
        #expect(error?.kind == .cancelled)
        #expect(try await slow.value.status == 200)
        await engine.shutdown()
    }

    /// Two rounds of 20 concurrent `/slow?ms=50` requests through `send`, each expected to answer 200.
    private func sendTwoRoundsOfTwentySlowRequests(_ engine: HTTPDeliveryEngine) async throws {
        for round in 0..<2 {
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<20 {
                    group.addTask { try await engine.send(HTTPRequest(url: peer.url("/slow?ms=50"))).status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 20), "round \(round)")
        }
    }

    // MARK: - Several drivers

    @Test func twoDriversShareTheInFlightLimitAndReuseTheirConnections() async throws {
        let engine = try HTTPDeliveryEngine(configuration: .init(maxInFlight: 4, drivers: 2))
        try await sendTwoRoundsOfTwentySlowRequests(engine)
        let collector = CompletionCollector()
        let receiver = DeliveryReceiver { collector.add($0) }
        engine.submit((0..<12).map { (Int64($0), HTTPRequest(url: peer.url("/slow?ms=30"))) }, to: receiver)
        try await waitUntil { collector.count == 12 }
        #expect(Set(collector.all.map(\.tag)) == Set(0..<12))
        await engine.shutdown()
        let stats = try await peer.stats()
        #expect(stats.requests == 52)
        #expect(stats.max_concurrency == 4)  // two drivers with two slots each, never more
        #expect(stats.connections == 4)
    }

    @Test func cancellingAcrossDriversReachesEveryRequest() async throws {
        let engine = try HTTPDeliveryEngine(configuration: .init(maxInFlight: 4, drivers: 2))
        let collector = CompletionCollector()
        let receiver = DeliveryReceiver { collector.add($0) }
        engine.submit(
            (0..<8).map { (Int64($0), HTTPRequest(url: peer.url("/hang"), timeout: .seconds(30))) },
            to: receiver
        )
        try await waitUntil { try await peer.stats().in_flight == 4 }
        engine.cancelWaiting(of: receiver)
        try await waitUntil { collector.count == 4 }
        #expect(try await peer.stats().in_flight == 4)
        engine.cancelAll(of: receiver)
        try await waitUntil { collector.count == 8 }
        #expect(Set(collector.all.map(\.tag)) == Set(0..<8))
        try await waitUntil { try await peer.stats().in_flight == 0 }
        await engine.shutdown()
    }

    @Test func limitsAreSplitBetweenDriversAndNeverToZero() {
        let split = HTTPDeliveryEngine.Configuration(maxInFlight: 5, maxHostConnections: 3, drivers: 2)
        #expect(split.effectiveDrivers == 2)
        #expect(split.share(0).maxInFlight == 3 && split.share(1).maxInFlight == 2)
        #expect(split.share(0).maxHostConnections == 2 && split.share(1).maxHostConnections == 1)
        #expect(split.share(0).maxTotalConnections == 0)  // no limit stays no limit
        #expect(HTTPDeliveryEngine.Configuration(maxInFlight: 1, drivers: 2).effectiveDrivers == 1)
        #expect(
            HTTPDeliveryEngine.Configuration(maxInFlight: 8, maxTotalConnections: 1, drivers: 4).effectiveDrivers == 1
        )
        #expect(HTTPDeliveryEngine.Configuration(maxInFlight: 8, drivers: 0).effectiveDrivers == 1)
    }

    // MARK: - Batch interface (submit / DeliveryReceiver)

    @Test func submittedBatchesComeBackTaggedWithinTheInFlightLimit() async throws {
        let engine = try HTTPDeliveryEngine(configuration: .init(maxInFlight: 4))
        let collector = CompletionCollector()
        let receiver = DeliveryReceiver { collector.add($0) }
        // Two batches of 10: the engine runs 4 at a time and queues the rest in order.
        for batch in 0..<2 {
            engine.submit(
                (0..<10).map { index in
                    let tag = Int64(batch * 10 + index)
                    return (tag, HTTPRequest(method: "POST", url: peer.url("/slow?ms=30"), body: Array("\(tag)".utf8)))
                },
                to: receiver
            )
        }
        try await waitUntil { collector.count == 20 }
        let completions = collector.all
        #expect(Set(completions.map(\.tag)) == Set(0..<20))
        #expect(completions.allSatisfy { (try? $0.result.get().status) == 200 })
        #expect(collector.batches < 20)  // several outcomes per hand-over
        let stats = try await peer.stats()
        #expect(stats.requests == 20)
        #expect(stats.max_concurrency == 4)
        await engine.shutdown()
    }

    @Test func cancelWaitingWithdrawsOnlyQueuedRequestsAndCancelAllTheRest() async throws {
        let engine = try HTTPDeliveryEngine(configuration: .init(maxInFlight: 2))
        let collector = CompletionCollector()
        let receiver = DeliveryReceiver { collector.add($0) }
        engine.submit(
            (0..<5).map { (Int64($0), HTTPRequest(url: peer.url("/hang"), timeout: .seconds(30))) },
            to: receiver
        )
        try await waitUntil { try await peer.stats().in_flight == 2 }
        engine.cancelWaiting(of: receiver)
        try await waitUntil { collector.count == 3 }
        #expect(Set(collector.all.map(\.tag)) == [2, 3, 4])  // the queued ones, in order of submission
        #expect(collector.all.allSatisfy { !$0.sent })  // withdrawn before they reached the server
        #expect(try await peer.stats().in_flight == 2)  // the two sent go on
        engine.cancelAll(of: receiver)
        try await waitUntil { collector.count == 5 }
        let kinds = collector.all.map { result -> HTTPClientError.Kind? in
            if case .failure(let error) = result.result { return error.kind }
            return nil
        }
        #expect(kinds == Array(repeating: .cancelled, count: 5))
        #expect(collector.all.filter(\.sent).map(\.tag).sorted() == [0, 1])  // the two that were running
        try await waitUntil { try await peer.stats().in_flight == 0 }
        await engine.shutdown()
    }

    @Test func shutdownReportsOutstandingSubmissionsAndRefusesLaterOnes() async throws {
        let engine = try HTTPDeliveryEngine(configuration: .init(maxInFlight: 1))
        let collector = CompletionCollector()
        let receiver = DeliveryReceiver { collector.add($0) }
        engine.submit(
            [
                (1, HTTPRequest(url: peer.url("/hang"), timeout: .seconds(30))),
                (2, HTTPRequest(url: peer.url("/hang"))),
            ],
            to: receiver
        )
        try await waitUntil { try await peer.stats().in_flight == 1 }
        await engine.shutdown()
        #expect(collector.count == 2)
        engine.submit([(3, HTTPRequest(url: peer.url("/status/200")))], to: receiver)
        #expect(collector.count == 3)
        #expect(
            collector.all.allSatisfy {
                if case .failure(let error) = $0.result { error.kind == .cancelled } else { false }
            }
        )
    }

    /// Jobs submitted while every slot is taken do not wake the driver (it takes them when a transfer ends); a job
    /// for a driver with a free slot does. Before, each such submission cost a wake-up: a `send` on curl's wake-up
    /// socket, a `poll` that returned at once and a turn over every transfer (BENCHMARKS.md, "Webhook @8: CPU per
    /// delivery").
    @Test func jobsForAFullDriverWaitWithoutWakingIt() async throws {
        let engine = try HTTPDeliveryEngine(configuration: .init(maxInFlight: 1))
        let collector = CompletionCollector()
        let receiver = DeliveryReceiver { collector.add($0) }
        let held = CompletionCollector()
        let holder = DeliveryReceiver { held.add($0) }
        engine.submit([(0, HTTPRequest(url: peer.url("/hang"), timeout: .seconds(60)))], to: holder)
        try await waitUntil { try await peer.stats().in_flight == 1 }
        let beforeJobs = engine.driverWakeUps
        for tag in 1...5 {
            engine.submit([(Int64(tag), HTTPRequest(url: peer.url("/status/200")))], to: receiver)
        }
        #expect(engine.driverWakeUps == beforeJobs)  // the one slot is taken: nothing to wake the driver for
        engine.cancelAll(of: holder)  // wakes it; the slot frees, and the queued jobs go one at a time, in order
        try await waitUntil { collector.count == 5 }
        #expect(collector.all.map(\.tag) == [1, 2, 3, 4, 5])
        #expect(collector.all.allSatisfy { (try? $0.result.get().status) == 200 })
        #expect(held.count == 1)
        let idle = engine.driverWakeUps
        engine.submit([(6, HTTPRequest(url: peer.url("/status/200")))], to: receiver)
        try await waitUntil { collector.count == 6 }
        #expect(engine.driverWakeUps == idle + 1)  // an idle driver with a free slot is woken for a job
        await engine.shutdown()
    }

    /// libcurl sends `Expect: 100-continue` (and waits up to a second for an answer) for a large body (7.88: over
    /// 1 MiB); the engine removes the header for bodies over 1 KiB and leaves the line out for smaller ones, which no
    /// libcurl asks for (`CurlEasyHandle.largestBodyWithoutExpect`). No body reaches the server with `Expect`,
    /// whichever side of either threshold it is on.
    @Test func bodiesOnBothSidesOfCurlsExpectThresholdGoWithoutExpect() async throws {
        let engine = try HTTPDeliveryEngine(configuration: .init(maxInFlight: 1))
        for size in [0, 300, 1024, 1025, (1 << 20) + 1] {
            let body = (0..<size).map { UInt8(ascii: "a") + UInt8($0 % 26) }
            let echo = try HTTPPeer.decodeEcho(
                try await engine.send(
                    HTTPRequest(
                        method: "POST",
                        url: peer.url("/echo"),
                        headers: [("content-type", "text/plain")],
                        body: body
                    )
                )
            )
            #expect(echo.header("expect") == nil, "body of \(size) bytes")
            #expect(echo.body == body, "body of \(size) bytes")
            #expect(echo.header("content-type") == "text/plain")
        }
        await engine.shutdown()
    }

    /// One easy handle serves requests of different shapes in turn (maxInFlight 1): options of one request never
    /// leak into the next — a body into a GET, a method into a POST, a header into the next request.
    @Test func aReusedHandleSendsEachRequestAsGiven() async throws {
        let engine = try HTTPDeliveryEngine(configuration: .init(maxInFlight: 1))
        let echo = peer.url("/echo")
        let posted = try HTTPPeer.decodeEcho(
            try await engine.send(
                HTTPRequest(
                    method: "POST",
                    url: echo,
                    headers: [("content-type", "application/json"), ("x-first", "1")],
                    body: Array(#"{"a":1}"#.utf8)
                )
            )
        )
        #expect(posted.method == "POST" && posted.body == Array(#"{"a":1}"#.utf8) && posted.header("x-first") == "1")
        let second = try HTTPPeer.decodeEcho(
            try await engine.send(
                HTTPRequest(
                    method: "POST",
                    url: echo,
                    headers: [("x-second", "")],
                    body: Array("two".utf8)
                )
            )
        )
        #expect(second.body == Array("two".utf8))
        #expect(second.header("x-first") == nil)
        #expect(second.header("x-second") == "")
        #expect(second.header("content-type") == nil)  // not curl's form-urlencoded default
        #expect(second.header("user-agent") == "directus-bridge")
        let put = try HTTPPeer.decodeEcho(try await engine.send(HTTPRequest(method: "PUT", url: echo)))
        #expect(put.method == "PUT" && put.body.isEmpty)
        let get = try HTTPPeer.decodeEcho(try await engine.send(HTTPRequest(url: echo + "?q=1")))
        #expect(get.method == "GET" && get.body.isEmpty && get.query == "q=1")
        let emptyPost = try HTTPPeer.decodeEcho(try await engine.send(HTTPRequest(method: "POST", url: echo)))
        #expect(emptyPost.method == "POST" && emptyPost.body.isEmpty && emptyPost.header("content-length") == "0")
        let large = Array(repeating: UInt8(ascii: "x"), count: 5000)
        let agent = try HTTPPeer.decodeEcho(
            try await engine.send(
                HTTPRequest(
                    method: "POST",
                    url: echo,
                    headers: [("User-Agent", "custom/1")],
                    body: large
                )
            )
        )
        #expect(agent.body == large && agent.header("user-agent") == "custom/1" && agent.header("expect") == nil)
        let patch = try HTTPPeer.decodeEcho(
            try await engine.send(
                HTTPRequest(
                    method: "PATCH",
                    url: echo,
                    body: Array("p".utf8)
                )
            )
        )
        #expect(patch.method == "PATCH" && patch.body == Array("p".utf8))
        let head = try await engine.send(HTTPRequest(method: "HEAD", url: peer.url("/status/200")))
        #expect(head.status == 200 && head.body.isEmpty)
        await engine.shutdown()
    }
}

/// Collects what a `DeliveryReceiver` is handed, from the driver thread.
private final class CompletionCollector: Sendable {
    private let state = Mutex<(completions: [DeliveryReceiver.Completion], batches: Int)>(([], 0))

    func add(_ completions: [DeliveryReceiver.Completion]) {
        state.withLock {
            $0.completions += completions
            $0.batches += 1
        }
    }

    var all: [DeliveryReceiver.Completion] { state.withLock { $0.completions } }
    var count: Int { state.withLock { $0.completions.count } }
    var batches: Int { state.withLock { $0.batches } }
}

/// Thread starts counted across threads.
private final class StartCount: Sendable {
    let value = Atomic<Int>(0)
}
