import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeHTTP

/// Which implementation a shared behaviour test runs against.
enum TransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case rest
    case engine

    var testDescription: String { rawValue }

    /// Runs `body` with a fresh transport of this kind and shuts it down afterwards.
    func with<T>(
        _ options: HTTPClientOptions = HTTPClientOptions(),
        _ body: (any HTTPTransport) async throws -> T
    ) async throws -> T {
        switch self {
        case .rest:
            return try await body(HTTPClient(options: options))
        case .engine:
            let engine = try HTTPDeliveryEngine(options: options)
            do {
                let result = try await body(EngineTransport(engine: engine))
                await engine.shutdown()
                return result
            } catch {
                await engine.shutdown()
                throw error
            }
        }
    }
}

/// Behaviour both transports share, against the Python peer.
@Suite(.serialized, .timeLimit(.minutes(3)))  // its own peers start slowly on a loaded box (docs/RELIABILITY.md)
struct TransportBehaviourTests {
    let peer: HTTPPeer

    init() async throws {
        peer = try await HTTPPeer()
    }

    @Test(arguments: TransportKind.allCases)
    func statusesAndBodies(kind: TransportKind) async throws {
        try await kind.with { client in
            let ok = try await client.send(HTTPRequest(url: peer.url("/status/200")))
            #expect(ok.status == 200)
            #expect(ok.bodyText == "status 200")
            #expect(ok.header("Content-Type") == "text/plain; charset=utf-8")
            #expect(ok.httpVersion == "1.1")

            let missing = try await client.send(HTTPRequest(url: peer.url("/status/404")))
            #expect(missing.status == 404)
            #expect(missing.bodyText == "status 404")

            let empty = try await client.send(HTTPRequest(url: peer.url("/status/204")))
            #expect(empty.status == 204)
            #expect(empty.body.isEmpty)

            let head = try await client.send(HTTPRequest(method: "HEAD", url: peer.url("/status/200")))
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func retryAfterIsVisible(kind: TransportKind) async throws {
        try await kind.with { client in
            let response = try await client.send(HTTPRequest(url: peer.url("/status/503?retry_after=7")))
            #expect(response.status == 503)
            #expect(response.header("retry-after") == "7")
            #expect(response.header("RETRY-AFTER") == "7")
            #expect(response.headers.count > 1)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func onlyTheKeptResponseHeadersAreKept(kind: TransportKind) async throws {
        try await kind.with(HTTPClientOptions(keptResponseHeaders: ["Retry-After", "x-absent"])) { client in
            let response = try await client.send(HTTPRequest(url: peer.url("/status/503?retry_after=7")))
            #expect(response.status == 503)
            #expect(response.bodyText == "status 503")
            #expect(response.headers.map(\.name) == ["retry-after"])
            #expect(response.header("retry-after") == "7")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func requestHeadersAndBodyAreEchoed(kind: TransportKind) async throws {
        // NUL and high bytes, and more than 1 KiB (curl would otherwise wait for "100 Continue").
        let body: [UInt8] = Array(0...255) + Array(repeating: 0, count: 2000) + Array("end".utf8)
        try await kind.with { client in
            let request = HTTPRequest(
                method: "POST",
                url: peer.url("/echo?a=1&b=two"),
                headers: [("Content-Type", "application/json"), ("webhook-id", "evt_1"), ("X-Empty", "")],
                body: body
            )
            let echo = try HTTPPeer.decodeEcho(try await client.send(request))
            #expect(echo.method == "POST")
            #expect(echo.path == "/echo")
            #expect(echo.query == "a=1&b=two")
            #expect(echo.header("content-type") == "application/json")
            #expect(echo.header("webhook-id") == "evt_1")
            #expect(echo.header("x-empty") == "")
            #expect(echo.header("expect") == nil)
            #expect(echo.header("user-agent") == "directus-bridge")
            #expect(echo.body == body)

            let patch = try HTTPPeer.decodeEcho(
                try await client.send(
                    HTTPRequest(method: "PATCH", url: peer.url("/echo"), body: Array("{}".utf8))
                )
            )
            #expect(patch.method == "PATCH")
            #expect(patch.body == Array("{}".utf8))
            #expect(patch.header("content-type") != "application/x-www-form-urlencoded")

            let delete = try HTTPPeer.decodeEcho(
                try await client.send(HTTPRequest(method: "DELETE", url: peer.url("/echo")))
            )
            #expect(delete.method == "DELETE")
            #expect(delete.body.isEmpty)

            let emptyPost = try HTTPPeer.decodeEcho(
                try await client.send(HTTPRequest(method: "POST", url: peer.url("/echo")))
            )
            #expect(emptyPost.method == "POST")
            #expect(emptyPost.header("content-length") == "0")

            let agent = try HTTPPeer.decodeEcho(
                try await client.send(
                    HTTPRequest(url: peer.url("/echo"), headers: [("User-Agent", "custom/1")])
                )
            )
            #expect(agent.method == "GET")
            #expect(agent.header("user-agent") == "custom/1")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func redirectIsNotFollowed(kind: TransportKind) async throws {
        try await kind.with { client in
            let response = try await client.send(HTTPRequest(method: "POST", url: peer.url("/redirect"), body: []))
            #expect(response.status == 302)
            #expect(response.header("location") == "/status/200")
            #expect(response.bodyText == "moved")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func hangingEndpointIsCutAtTheTimeout(kind: TransportKind) async throws {
        try await kind.with { client in
            let error = await expectHTTPError {
                try await client.send(HTTPRequest(url: peer.url("/hang"), timeout: .milliseconds(300)))
            }
            #expect(error?.kind == .timeout)
            #expect(error?.curlCode == 28)
            #expect(error?.isRetriable == true)
            // The client still works afterwards.
            let after = try await client.send(HTTPRequest(url: peer.url("/status/200")))
            #expect(after.status == 200)
        }
    }

    /// Issue 23, item 6: a header value with CR, LF or NUL (a token a server issued, a value the config did not
    /// refuse) would end its header and start one the value chose. Such a request is never sent.
    @Test(arguments: TransportKind.allCases)
    func aHeaderValueWithALineBreakIsNeverSent(kind: TransportKind) async throws {
        try await kind.with { client in
            for value in ["Bearer abcdefgh\r\nX-Injected: yes", "Bearer abc\ndef", "Bearer abc\u{0}def"] {
                let error = await expectHTTPError {
                    try await client.send(
                        HTTPRequest(
                            method: "POST",
                            url: peer.url("/echo"),
                            headers: [("authorization", value)],
                            body: []
                        )
                    )
                }
                #expect(error?.kind == .other && error?.isRetriable == false, "\(String(describing: error))")
                #expect(error.map { !"\($0)".contains("abcdefgh") && !"\($0)".contains("X-Injected") } == true)
            }
            let sent = try await client.send(HTTPRequest(url: peer.url("/echo"), headers: [("x-fine", "one line")]))
            #expect(!sent.bodyText.contains("X-Injected") && sent.bodyText.contains("one line"), "\(sent.bodyText)")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func connectionRefusedIsCouldNotConnect(kind: TransportKind) async throws {
        let port = closedPort()
        try await kind.with { client in
            let error = await expectHTTPError {
                try await client.send(HTTPRequest(url: "http://127.0.0.1:\(port)/x?token=secret"))
            }
            #expect(error?.kind == .couldNotConnect)
            #expect(error?.isRetriable == true)
            #expect(error?.url == "http://127.0.0.1:\(port)")
            #expect(error.map { !"\($0)".contains("secret") } == true)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func keepAliveReusesOneConnection(kind: TransportKind) async throws {
        try await peer.reset()
        try await kind.with { client in
            var reused = 0
            for _ in 0..<10 {
                let response = try await client.send(HTTPRequest(url: peer.url("/status/200")))
                #expect(response.status == 200)
                if response.reusedConnection { reused += 1 }
            }
            #expect(reused == 9)
        }
        let stats = try await peer.stats()
        #expect(stats.requests == 10)
        #expect(stats.connections == 1)
    }

    @Test(arguments: TransportKind.allCases)
    func largeBodyIsCappedKeepingThePrefix(kind: TransportKind) async throws {
        let pattern = (0..<1000).map { UInt8($0 % 256) }
        try await kind.with(HTTPClientOptions(maxResponseBytes: 1000)) { client in
            let response = try await client.send(HTTPRequest(url: peer.url("/big?size=5000000")))
            #expect(response.status == 200)
            #expect(response.bodyTruncated)
            #expect(response.body == pattern)
            let small = try await client.send(HTTPRequest(url: peer.url("/big?size=1000")))
            #expect(!small.bodyTruncated)
            #expect(small.body == pattern)
            // A request may ask for a lower or a higher cap than the client's (one oversized item read alone).
            let lower = try await client.send(HTTPRequest(url: peer.url("/big?size=1000"), maxResponseBytes: 10))
            #expect(lower.bodyTruncated && lower.body == Array(pattern.prefix(10)))
            let higher = try await client.send(HTTPRequest(url: peer.url("/big?size=3000"), maxResponseBytes: 3000))
            #expect(!higher.bodyTruncated && higher.body.count == 3000)
        }
        try await kind.with(HTTPClientOptions(maxResponseBytes: 1000, oversizedBody: .fail)) { client in
            let error = await expectHTTPError { try await client.send(HTTPRequest(url: peer.url("/big?size=1001"))) }
            #expect(error?.kind == .tooLarge)
            #expect(error?.isRetriable == false)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func cancellingTheTaskAbortsTheTransfer(kind: TransportKind) async throws {
        try await peer.reset()
        try await kind.with { client in
            let task = Task {
                try await client.send(HTTPRequest(url: peer.url("/hang"), timeout: .seconds(30)))
            }
            // Wait until the peer has the request, so the cancel hits a transfer in progress.
            try await waitUntil { try await peer.stats().in_flight == 1 }
            #expect(try await peer.stats().in_flight == 1)
            task.cancel()
            let error = await expectHTTPError { try await task.value }
            #expect(error?.kind == .cancelled)
            #expect(error?.isRetriable == false)
            // The peer sees the connection go away.
            try await waitUntil { try await peer.stats().in_flight == 0 }
            #expect(try await peer.stats().in_flight == 0)

            // A task cancelled before it sends never reaches the peer.
            let requestsBefore = try await peer.stats().requests
            let early = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await client.send(HTTPRequest(url: peer.url("/status/200")))
            }
            let earlyError = await expectHTTPError { try await early.value }
            #expect(earlyError?.kind == .cancelled)
            #expect(try await peer.stats().requests == requestsBefore)
        }
    }
}
