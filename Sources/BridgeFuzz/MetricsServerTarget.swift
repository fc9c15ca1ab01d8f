import BridgeCore
import BridgeEvents
import BridgeDirectus
import BridgeActivity
import BridgeSinks
import BridgeHTTPServer
import BridgeSystem

/// Raw bytes sent to the operations server (`HTTPServer` on libmicrohttpd with the `/metrics`, `/healthz` and
/// `/readyz` routes of `OperationsServer`), over a loopback connection, as any client on the network could.
///
/// One server runs for the whole fuzzing session (on libmicrohttpd's thread, where the route handlers run too);
/// each input is one connection: the bytes are sent, the write side is shut, and the answer is read until the
/// server closes, sends nothing more for 50 ms, or nothing at all for 250 ms (libmicrohttpd keeps a half-closed
/// connection until its timeout; waiting for that would leave a handful of inputs per second). libmicrohttpd is not instrumented, so
/// coverage guides only the Swift side (routing, handlers, rendering); its request parser is exercised by mutation
/// alone.
///
/// Invariants:
/// - Whatever the server answers is HTTP/1.x with a status the routes or libmicrohttpd give (200, 400, 404, 405,
///   413, 414, 431, 501, 503, 505) and a complete head.
/// - The server keeps answering the orchestrator: a well-formed `GET /healthz` from another address (127.0.0.2) gets
///   its 200 every 256 inputs, so neither a crash on its threads, a deadlock nor connections left behind by earlier
///   inputs go unnoticed. The inputs all come from 127.0.0.1, a client the per-address limit is there to contain:
///   connections it leaves half-closed are held until the connection timeout, and while 16 are held its further
///   connections are refused, which the probe from 127.0.0.1 would mistake for a dead server.
enum MetricsServerTarget {
    static let target = FuzzTarget(
        name: "metrics-server",
        summary: "operations server (libmicrohttpd + /metrics, /healthz, /readyz): any request bytes",
        run: run
    )

    /// The statuses a response may carry.
    static let statuses: Set<Int> = [200, 400, 404, 405, 413, 414, 431, 501, 503, 505]

    /// The server, started on first use and kept for the process's life. Only the fuzzing thread touches it
    /// (`stop()` is never called; libmicrohttpd's threads see only the route table).
    nonisolated(unsafe) static let server: HTTPServer = {
        let registry = MetricsRegistry()
        let events = registry.counter("directus_bridge_events_total", help: "Events.", labels: [("sink", "a\"b\\c\nd")])
        events.increment(by: 3)
        registry.gauge("directus_bridge_queue_depth", help: "Queue depth.").set(7)
        let health = HealthState(expectedSubscriptions: ["s1", "s\u{1}2"])
        health.update { $0.stuckSinks["web\"hook"] = "HTTP 503 \u{7f}" }
        let routes = OperationsServer.routes(registry: registry, health: health, redactor: Redactor())
        do {
            guard let address = SocketAddress(ipAddress: "127.0.0.1", port: 0) else {
                fatalError("127.0.0.1 is a numeric address")
            }
            return try HTTPServer(
                address: address,
                routes: routes,
                options: HTTPServerOptions(connectionTimeout: .seconds(2))
            )
        } catch {
            fatalError("the operations server did not start: \(error)")
        }
    }()

    nonisolated(unsafe) static var runs = 0

    static func run(_ bytes: UnsafeRawBufferPointer) {
        let answer = exchange(Array(bytes))
        checkResponses(answer)
        runs += 1
        if runs % 256 == 0 {
            let request = Array("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)
            let probe = exchange(request, from: "127.0.0.2", firstByte: .seconds(5))
            require(probe.starts(with: Array("HTTP/1.1 200".utf8)), "the server stopped answering /healthz")
        }
    }

    /// Sends `request` from `sourceAddress`, shuts the write side and returns what the server sent until it closed, sent nothing for
    /// `firstByte`, or went quiet for `quiet` after sending something.
    static func exchange(
        _ request: [UInt8],
        from sourceAddress: String = "127.0.0.1",
        firstByte: Duration = .milliseconds(250),
        quiet: Duration = .milliseconds(50)
    ) -> [UInt8] {
        guard let address = SocketAddress(ipAddress: "127.0.0.1", port: server.port),
            let source = SocketAddress(ipAddress: sourceAddress, port: 0)
        else { return [] }
        let deadline = ContinuousClock.now + .seconds(5)
        let socket: Socket
        do {
            socket = try Socket.connect(to: address, from: source, deadline: deadline)
        } catch {
            fatalError("invariant broken: the operations server refused a connection: \(error)")
        }
        var offset = 0
        while offset < request.count {
            let result = try? request[offset...].withUnsafeBytes { try socket.send($0) }
            switch result {
            case .transferred(let count)?: offset += count
            case .wouldBlock?: _ = try? socket.wait(for: .writable, until: deadline)
            default: offset = request.count  // the server closed early (a refused request): read its answer
            }
            require(ContinuousClock.now < deadline, "the server stopped reading for 5 s")
        }
        socket.shutdownWrite()
        let firstByteDeadline = min(deadline, ContinuousClock.now + firstByte)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while ContinuousClock.now < deadline {
            let until = received.isEmpty ? firstByteDeadline : min(deadline, ContinuousClock.now + quiet)
            guard (try? socket.wait(for: .readable, until: until)) == true else { return received }
            let result = try? buffer.withUnsafeMutableBytes { try socket.receive(into: $0) }
            switch result {
            case .transferred(let count)?: received += buffer[..<count]
            case .wouldBlock?: continue
            case .endOfStream?, nil: return received
            }
        }
        return received
    }

    /// Each response in `bytes` starts with an HTTP/1.x status line with an expected status and has a whole head.
    static func checkResponses(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }  // closed without an answer (e.g. a connection reset)
        let text = String(decoding: bytes, as: UTF8.self)
        require(text.hasPrefix("HTTP/1.1 ") || text.hasPrefix("HTTP/1.0 "), "not an HTTP answer: \(text.prefix(80))")
        let status = Int(text.dropFirst(9).prefix(3)) ?? 0
        require(statuses.contains(status), "unexpected status \(status): \(text.prefix(200))")
        require(text.contains("\r\n\r\n"), "a response head without its end: \(text.prefix(200))")
    }
}
