import BridgeHTTPServer
import BridgeSystem
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Slow, malformed and greedy clients: the server must neither hang nor stop serving others.
@Suite struct HTTPServerRobustnessTests {
    /// A well-behaved request on a fresh connection succeeds.
    func expectServing(_ server: HTTPServer, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let response = try fetch(server, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(response.status == 200, "server stopped serving", sourceLocation: sourceLocation)
    }

    @Test func slowlorisClientIsDisconnectedAndDoesNotBlockOthers() throws {
        let server = try HTTPServer(
            address: loopback(),
            routes: testRoutes(),
            options: HTTPServerOptions(connectionTimeout: .seconds(1))
        )
        let slow = try RawClient(server.boundAddresses[0])
        #expect(slow.send("GET /hello HTTP/1.1\r\nHost: x\r\nX-Slow: "))
        // Trickle a byte now and then, never finishing the headers.
        for _ in 0..<3 {
            #expect(slow.send("a"))
            try expectServing(server)
            usleep(100_000)
        }
        // Then go quiet: the idle connection is closed by the server (well within the generous deadline).
        let (bytes, closed) = slow.readAll(timeout: .seconds(8))
        #expect(closed, "the stalled connection was not closed")
        #expect(!String(decoding: bytes, as: UTF8.self).hasPrefix("HTTP/1.1 200"))
        try expectServing(server)
    }

    @Test func connectionThatSendsNothingIsClosedAfterTheTimeout() throws {
        let server = try HTTPServer(
            address: loopback(),
            routes: testRoutes(),
            options: HTTPServerOptions(connectionTimeout: .seconds(1))
        )
        let idle = try RawClient(server.boundAddresses[0])
        try expectServing(server)
        #expect(idle.readAll(timeout: .seconds(8)).closed)
    }

    @Test(arguments: [
        "\u{16}\u{03}\u{01}\u{02}\u{00}\u{01}\u{00}\u{01}\u{fc}\u{03}\u{03}\r\n\r\n",  // a TLS ClientHello on plain HTTP
        "garbage garbage garbage\r\n\r\n",
        "GET\r\n\r\n",
        "GET /hello HTTP/9.9\r\nHost: x\r\n\r\n",
        "GET /hello HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
        "GET /hello HTTP/1.1\r\nno colon here\r\n\r\n",
        "\r\n\r\n\r\n\r\n",
        "GET /hello HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n",
    ])
    func malformedRequestIsRejectedOrClosed(_ request: String) throws {
        let server = try HTTPServer(
            address: loopback(),
            routes: testRoutes(),
            options: HTTPServerOptions(connectionTimeout: .seconds(1))
        )
        let client = try RawClient(server.boundAddresses[0])
        client.send(request)
        client.socket.shutdownWrite()
        // Rejected at once, or (blank lines only: still waiting for a request line) closed by the idle timeout.
        let (bytes, closed) = client.readAll(timeout: .seconds(8))
        #expect(closed, "the server kept a malformed connection open")
        let text = String(decoding: bytes, as: UTF8.self)
        if let response = RawResponse(parsing: bytes), response.status == 200 {
            // Only requests that are valid after all (MHD tolerates some) may succeed.
            #expect(text.contains("hello"))
        }
        try expectServing(server)
    }

    @Test func randomBytesDoNotHurtTheServer() throws {
        let server = try HTTPServer(
            address: loopback(),
            routes: testRoutes(),
            options: HTTPServerOptions(connectionTimeout: .seconds(1))
        )
        var generator = SystemRandomNumberGenerator()
        let clients = try (0..<20).map { _ in try RawClient(server.boundAddresses[0]) }
        for client in clients {
            let noise = (0..<Int.random(in: 1...4096, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            client.send(noise)
            client.socket.shutdownWrite()
        }
        try expectServing(server)
        for client in clients {
            // Rejected at once, or (no line end yet) closed by the idle timeout.
            #expect(client.readAll(timeout: .seconds(8)).closed)
        }
        try expectServing(server)
    }

    @Test func hugeHeadersAreRefused() throws {
        let server = try HTTPServer(
            address: loopback(),
            routes: testRoutes(),
            options: HTTPServerOptions(memoryLimit: 16 * 1024)
        )
        let client = try RawClient(server.boundAddresses[0])
        let big = String(repeating: "x", count: 256 * 1024)
        client.send("GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: \(big)\r\n\r\n")
        let (bytes, closed) = client.readAll()
        #expect(closed)
        if let response = RawResponse(parsing: bytes) {
            #expect([400, 413, 414, 431].contains(response.status), "status \(response.status)")
        }
        // Many headers instead of one long one.
        let many = try RawClient(server.boundAddresses[0])
        let headers = (0..<5000).map { "X-H\($0): v\r\n" }.joined()
        many.send("GET /hello HTTP/1.1\r\nHost: x\r\n\(headers)\r\n")
        #expect(many.readAll().closed)
        // A long URL.
        let url = try RawClient(server.boundAddresses[0])
        url.send("GET /hello?\(big) HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(url.readAll().closed)
        try expectServing(server)
    }

    @Test func connectionsOverTheLimitWaitUntilASlotIsFree() throws {
        let server = try HTTPServer(
            address: loopback(),
            routes: testRoutes(),
            options: HTTPServerOptions(connectionLimit: 4, perClientLimit: 4)
        )
        let idle = try (0..<4).map { _ in try RawClient(server.boundAddresses[0]) }
        for client in idle { client.send("GET /hello HTTP/1.1\r\nHost: x\r\n") }  // unfinished
        // A fifth connection waits in the kernel's backlog: the server does not take it while at the limit.
        let extra = try RawClient(server.boundAddresses[0])
        extra.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(extra.readAll(timeout: .milliseconds(500)).bytes.isEmpty)
        // Once the idle ones go away, it is served.
        for client in idle { client.socket.shutdown() }
        #expect(extra.readResponse()?.status == 200)
        try expectServing(server)
    }

    /// One client holding every connection with headers it trickles (the idle timeout restarts with each byte) kept
    /// every other client out for as long as it liked: a scraper, `/healthz` for the orchestrator's liveness probe,
    /// which then restarts the bridge again and again. A client (an address) now gets a share of the connections.
    @Test func oneClientCannotTakeEveryConnection() throws {
        let server = try HTTPServer(
            address: loopback(),
            routes: testRoutes(),
            options: HTTPServerOptions(connectionLimit: 8)
        )
        let hogs = try (0..<8).map { _ in try RawClient(server.boundAddresses[0]) }
        for hog in hogs { hog.send("GET /hello HTTP/1.1\r\nHost: x\r\n") }  // unfinished, kept alive
        let other = try RawClient(server.boundAddresses[0], from: loopback("127.0.0.2"))
        other.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(other.readResponse(timeout: .seconds(5))?.status == 200, "another client was kept out")
        for hog in hogs { hog.socket.shutdown() }
    }

    @Test func clientThatNeverReadsItsResponseDoesNotBlockOthers() throws {
        let bigBody = [UInt8](repeating: 0x41, count: 8 * 1024 * 1024)
        var routes = testRoutes()
        routes["/big"] = { _ in HTTPServerResponse(status: 200, body: bigBody) }
        let server = try HTTPServer(
            address: loopback(),
            routes: routes,
            options: HTTPServerOptions(connectionTimeout: .seconds(1))
        )
        let greedy = try RawClient(server.boundAddresses[0])
        for _ in 0..<4 { greedy.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n") }  // pipelined, never read
        try expectServing(server)
        try expectServing(server)
    }
}
