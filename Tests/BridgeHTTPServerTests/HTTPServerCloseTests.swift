import BridgeHTTPServer
import BridgeSystem
import Testing

/// `HTTPServer.close()` stops the server (`MHD_stop_daemon`, which joins libmicrohttpd's threads and so waits for the
/// requests in flight) on the blocking executor: the closing task is often on Swift's cooperative pool
/// (docs/RELIABILITY.md, issue 26).
@Suite struct HTTPServerCloseTests {
    /// What the held handler saw.
    struct Held {
        var entered = false
        var released = false
        /// Whether the handler returned because it was released (not because it gave up waiting).
        var finishedReleased: Bool?
    }

    /// A request's handler is held until a job of the closing task's executor (one thread) releases it, and that
    /// job is queued just before the close. A stop on the closing thread waits for the handler, which waits for the
    /// job, which waits for the thread: the handler gives up after its bound and the job runs only after the stop.
    /// Stopped off that thread, the job runs while the close waits, and the handler finishes released.
    @Test func closeLeavesTheClosingThreadFreeWhileARequestFinishes() async throws {
        let held = ConditionLock(Held())
        let routes: [String: HTTPRouteHandler] = [
            "/held": { _ in
                held.withLock { $0.entered = true }
                held.broadcast()
                // Only a failing run waits out the bound.
                let released = held.wait(until: .now + .seconds(120)) { $0.released }
                held.withLock { $0.finishedReleased = released }
                return HTTPServerResponse(status: 200, text: "released\n")
            }
        ]
        let server = try HTTPServer(address: loopback(), routes: routes)
        let address = server.boundAddresses[0]
        async let request: Void = BlockingExecutor.shared.perform {
            let client = try RawClient(address)
            client.send("GET /held HTTP/1.1\r\nHost: x\r\n\r\n")
            _ = client.readAll(timeout: .seconds(180))  // until the stop closes the connection
        }
        let entered = try await BlockingExecutor.shared.perform {
            held.wait(until: .now + .seconds(120)) { $0.entered }
        }
        try #require(entered, "the request never reached its handler")
        let closer = DedicatedThreadExecutor(name: "closer")
        defer { closer.shutdown() }
        await withTaskExecutorPreference(closer) {
            await withDiscardingTaskGroup { group in
                group.addTask {  // queued on the closer's one thread, behind the close
                    held.withLock { $0.released = true }
                    held.broadcast()
                }
                await server.close()
            }
        }
        try await request
        #expect(held.withLock { $0.finishedReleased } == true, "the handler gave up: the close held its thread")
    }
}
