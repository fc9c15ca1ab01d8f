import BridgeHTTP
import BridgeTestSupport
import Foundation
import Testing

/// What only the multi-handle engine does: many transfers at once, limits, shutdown.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct DeliveryEngineTests {
    let peer: HTTPPeer

    init() throws {
        peer = try HTTPPeer()
    }

    @Test func sixtyFourConcurrentRequestsAllSucceedAndOverlap() async throws {
        let engine = try HTTPDeliveryEngine(configuration: .init(maxInFlight: 64))
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<64 {
                group.addTask {
                    // The peer holds every request until all 64 are held at once, so success proves overlap.
                    let request = HTTPRequest(method: "POST", url: peer.url("/barrier?n=64"), body: Array("\(index)".utf8))
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
        for round in 0..<2 {
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<20 {
                    group.addTask { try await engine.send(HTTPRequest(url: peer.url("/slow?ms=50"))).status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 20), "round \(round)")
        }
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
}
