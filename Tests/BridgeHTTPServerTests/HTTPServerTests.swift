import BridgeHTTPServer
import BridgeSystem
import Synchronization
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Requests a handler saw, from the server's threads.
final class SeenRequests: Sendable {
    private let requests = Mutex<[HTTPServerRequest]>([])
    func append(_ request: HTTPServerRequest) { requests.withLock { $0.append(request) } }
    var all: [HTTPServerRequest] { requests.withLock { $0 } }
}

/// No response (or an unparsable one) arrived.
struct NoResponse: Error {}

/// Routes used by most tests: a text route, a route that echoes what the handler saw, and a JSON route.
func testRoutes(seen: SeenRequests? = nil) -> [String: HTTPRouteHandler] {
    [
        "/hello": { _ in HTTPServerResponse(status: 200, text: "hello\n") },
        "/seen": { request in
            seen?.append(request)
            return HTTPServerResponse(status: 200, text: "\(request.method) \(request.path)")
        },
        "/unready": { _ in
            HTTPServerResponse(status: 503, contentType: "application/json", text: #"{"ready":false}"#)
        },
    ]
}

func loopback(_ ip: String = "127.0.0.1") -> SocketAddress { SocketAddress(ipAddress: ip, port: 0)! }

/// Sends `request` on a new connection and reads one response.
func fetch(_ server: HTTPServer, _ request: String, address: SocketAddress? = nil) throws -> RawResponse {
    let client = try RawClient(address ?? server.boundAddresses[0])
    client.send(request)
    guard let response = client.readResponse() else { throw NoResponse() }
    return response
}

@Suite struct HTTPServerTests {
    @Test func servesRoutesWithStatusContentTypeAndBody() throws {
        let server = try HTTPServer(address: loopback(), routes: testRoutes())
        #expect(server.port > 0)
        let hello = try fetch(server, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(hello.status == 200)
        #expect(hello.text == "hello\n")
        #expect(hello.headers["content-type"] == "text/plain; charset=utf-8")
        #expect(hello.headers["cache-control"] == "no-store")

        let unready = try fetch(server, "GET /unready HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(unready.status == 503)
        #expect(unready.headers["content-type"] == "application/json")
        #expect(unready.text == #"{"ready":false}"#)
    }

    @Test func unknownPathIs404AndOtherMethodsAre405() throws {
        let server = try HTTPServer(address: loopback(), routes: testRoutes())
        let missing = try fetch(server, "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(missing.status == 404)
        let deleted = try fetch(server, "DELETE /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(deleted.status == 405)
        #expect(deleted.headers["allow"] == "GET, HEAD")
    }

    @Test func queryStringIsNotPartOfThePath() throws {
        let seen = SeenRequests()
        let server = try HTTPServer(address: loopback(), routes: testRoutes(seen: seen))
        let response = try fetch(server, "GET /seen?name[]=x&y=1 HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(response.status == 200)
        #expect(seen.all == [HTTPServerRequest(method: "GET", path: "/seen")])
    }

    @Test func headAnswersHeadersWithoutBody() throws {
        let server = try HTTPServer(address: loopback(), routes: testRoutes())
        let client = try RawClient(server.boundAddresses[0])
        client.send("HEAD /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let (bytes, closed) = client.readAll()
        #expect(closed)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 200"))
        #expect(text.lowercased().contains("content-length: 6\r\n"))
        #expect(text.hasSuffix("\r\n\r\n"), "no body after the headers: \(text)")
    }

    @Test func keepAliveServesSeveralRequestsOnOneConnection() throws {
        let server = try HTTPServer(address: loopback(), routes: testRoutes())
        let client = try RawClient(server.boundAddresses[0])
        for _ in 0..<3 {
            client.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
            let response = try #require(client.readResponse())
            #expect(response.status == 200)
            #expect(response.text == "hello\n")
            #expect(response.headers["connection"]?.lowercased() != "close", "\(response.headers)")
        }
    }

    @Test func postWithABodyIsRefusedWithoutReadingIt() throws {
        let server = try HTTPServer(address: loopback(), routes: testRoutes())
        let client = try RawClient(server.boundAddresses[0])
        // Announce a body far larger than what is sent: the server must answer, not wait for it.
        client.send("POST /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\nsome bytes")
        let response = try #require(client.readResponse())
        #expect(response.status == 405)
        #expect(try fetch(server, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n").status == 200)
    }

    @Test func bindsIPv6Loopback() throws {
        let server = try HTTPServer(address: loopback("::1"), routes: testRoutes())
        #expect(server.boundAddresses[0].isIPv6)
        #expect(server.boundAddresses[0].description == "[::1]:\(server.port)")
        let response = try fetch(server, "GET /hello HTTP/1.1\r\nHost: [::1]\r\n\r\n")
        #expect(response.status == 200)
    }

    @Test func hostNameListensOnEveryAddressOnOnePort() throws {
        let server = try HTTPServer.resolvingHost("localhost", port: 0, routes: testRoutes())
        #expect(!server.boundAddresses.isEmpty)
        #expect(Set(server.boundAddresses.map { $0.port }).count == 1)
        for address in server.boundAddresses {
            #expect(try fetch(server, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n", address: address).status == 200)
        }
    }

    @Test func addressInUseIsAnError() throws {
        let first = try HTTPServer(address: loopback(), routes: testRoutes())
        let taken = SocketAddress(ipAddress: "127.0.0.1", port: first.port)!
        let error = #expect(throws: HTTPServerError.self) {
            _ = try HTTPServer(address: taken, routes: testRoutes())
        }
        if let error {
            #expect(error.description.contains("127.0.0.1:\(first.port)"))
            #expect(error.description.lowercased().contains("in use"), "\(error)")
        }
    }

    @Test func unresolvableHostIsAnError() {
        #expect(throws: HTTPServerError.self) {
            _ = try HTTPServer.resolvingHost("no-such-host.invalid", port: 0, routes: testRoutes())
        }
    }

    @Test func closeClosesTheListener() async throws {
        let server = try HTTPServer(address: loopback(), routes: testRoutes())
        let address = server.boundAddresses[0]
        await server.close()
        await server.close()  // idempotent
        #expect(throws: SystemError.self) { _ = try Socket.connect(to: address, deadline: .now + .seconds(2)) }
    }

    @Test func manyConcurrentClientsAreServed() async throws {
        let server = try HTTPServer(
            address: loopback(),
            routes: testRoutes(),
            options: HTTPServerOptions(threads: 2)
        )
        let address = server.boundAddresses[0]
        let statuses = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<40 {
                group.addTask {
                    await Task.detached {
                        let client = try? RawClient(address)
                        client?.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
                        return client?.readResponse()?.status ?? 0
                    }.value
                }
            }
            var all: [Int] = []
            for await status in group { all.append(status) }
            return all
        }
        #expect(statuses == Array(repeating: 200, count: 40))
        withExtendedLifetime(server) {}
    }
}
