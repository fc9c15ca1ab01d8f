public import BridgeSystem
internal import CMicroHTTPD

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A small embedded HTTP/1.1 server on libmicrohttpd for the operations endpoints (`/metrics`, `/healthz`,
/// `/readyz`): fixed routes, `GET`/`HEAD` only, no request bodies.
///
/// libmicrohttpd parses requests and runs its own polling thread(s); it enforces the connection timeout (slow or
/// stalled clients), the connection limit and the header buffer size (huge headers get 431), and it answers
/// malformed requests with 400 itself, so none of that reaches Swift. Handlers run on the server's threads.
///
/// Owns the daemon(s): `close()` stops them and joins their threads on `BlockingExecutor.shared`, a `deinit`
/// without it submits the same stop there. Not `Sendable`: keep it in one task (the runtime creates it, keeps it
/// for the bridge's life and closes it at the end).
public final class HTTPServer {
    /// The addresses actually listened on, with the real port (the kernel's choice when asked for port 0).
    public let boundAddresses: [SocketAddress]
    private var daemons: [OpaquePointer]
    // Retained once for all daemons (`passRetained` in `init`), released by `RunningDaemons.stop()` after every daemon
    // thread has been joined, so no callback can see a freed table.
    private var routeTable: Unmanaged<RouteTable>?

    /// Listens on `address` (numeric IPv4 or IPv6, port 0 picks a free port) and serves `routes` (path → handler).
    public convenience init(
        address: SocketAddress,
        routes: [String: HTTPRouteHandler],
        options: HTTPServerOptions = HTTPServerOptions()
    ) throws(HTTPServerError) {
        try self.init(addresses: [address], label: address.description, routes: routes, options: options)
    }

    /// Resolves `host` (a name or a numeric address without brackets) and listens on every address it has, all on
    /// the same port (with port 0 the first bound port is reused for the rest). Addresses that cannot be bound are
    /// skipped as long as one can. Blocking (`getaddrinfo`): call it off Swift's cooperative pool.
    public static func resolvingHost(
        _ host: String,
        port: Int,
        routes: [String: HTTPRouteHandler],
        options: HTTPServerOptions = HTTPServerOptions()
    ) throws(HTTPServerError) -> HTTPServer {
        let label = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let addresses: [SocketAddress]
        if let numeric = SocketAddress(ipAddress: host, port: port) {
            addresses = [numeric]
        } else {
            do {
                addresses = try AddressResolver.resolve(host: host, port: port)
            } catch {
                throw HTTPServerError(address: label, reason: error.message, isRetriable: error.isRetriable)
            }
        }
        return try HTTPServer(addresses: addresses, label: label, routes: routes, options: options)
    }

    /// Listens on every one of `addresses` (already resolved), all on the same port; `label` names them in errors
    /// (`localhost:9464`). Addresses that cannot be bound are skipped as long as one can.
    public init(
        addresses: [SocketAddress],
        label: String,
        routes: [String: HTTPRouteHandler],
        options: HTTPServerOptions = HTTPServerOptions()
    ) throws(HTTPServerError) {
        let table = Unmanaged.passRetained(RouteTable(routes: routes))
        var daemons: [OpaquePointer] = []
        var bound: [SocketAddress] = []
        var firstError: HTTPServerError?
        for requested in addresses {
            var address = requested
            // Port 0 on a host with several addresses: every daemon takes the port the first one got.
            if let first = bound.first, requested.port == 0,
                let samePort = SocketAddress(ipAddress: requested.ipAddress, port: first.port)
            {
                address = samePort
            }
            switch Self.startDaemon(address, table: table, options: options) {
            case .success(let daemon):
                daemons.append(daemon)
                let port = Int(cmhd_bound_port(daemon))
                bound.append(SocketAddress(ipAddress: address.ipAddress, port: port) ?? address)
            case .failure(let error):
                firstError =
                    firstError
                    ?? HTTPServerError(
                        address: address.description,
                        reason: error.description,
                        isRetriable: error.isRetriable
                    )
            }
        }
        guard !daemons.isEmpty else {
            table.release()
            throw firstError ?? HTTPServerError(address: label, reason: "no address to listen on", isRetriable: false)
        }
        self.daemons = daemons
        self.boundAddresses = bound
        self.routeTable = table
    }

    /// Dropped without `close()`: the stop goes to `BlockingExecutor.shared`, as `close()`'s does, not to the
    /// dropping thread, often a cooperative one.
    deinit {
        guard let running = takeRunning() else { return }
        BlockingExecutor.shared.submit { running.stop() }
    }

    /// The port the server listens on.
    public var port: Int { boundAddresses.first?.port ?? 0 }

    /// Stops accepting, closes every connection and joins the server threads, on `BlockingExecutor.shared`:
    /// `MHD_stop_daemon` waits for the requests in flight, whose handlers may take their time, and the caller is
    /// often a task on the cooperative pool. Returns once stopped. Idempotent.
    public func close() async {
        guard let running = takeRunning() else { return }
        // `submit`, not `perform`: when no thread can be started it runs the stop on a Dispatch worker rather than
        // throw, so the stop completes on every path before the caller goes on (and the process exits).
        await withCheckedContinuation { (stopped: CheckedContinuation<Void, Never>) in
            BlockingExecutor.shared.submit {
                running.stop()
                stopped.resume()
            }
        }
    }

    /// The daemons and their route table, taken out of this object once (nil after that): whoever holds them stops
    /// them.
    private func takeRunning() -> RunningDaemons? {
        guard let routeTable else { return nil }
        defer {
            daemons.removeAll()
            self.routeTable = nil
        }
        return RunningDaemons(daemons: daemons, routeTable: routeTable)
    }

    private static func startDaemon(_ address: SocketAddress, table: Unmanaged<RouteTable>, options: HTTPServerOptions)
        -> Result<OpaquePointer, SystemError>
    {
        let timeoutSeconds = max(1, options.connectionTimeout.components.seconds)
        var savedErrno: Int32 = 0
        let daemon = address.withUnsafeSocketAddressBytes { raw, _ in
            errno = 0
            let daemon = cmhd_start_daemon(
                raw.assumingMemoryBound(to: sockaddr.self),
                address.isIPv6 ? 1 : 0,
                address.isIPv6Wildcard ? 1 : 0,
                accessHandler,
                table.toOpaque(),
                UInt32(clamping: timeoutSeconds),
                UInt32(clamping: max(1, options.connectionLimit)),
                UInt32(clamping: max(1, min(options.perClientLimit, options.connectionLimit))),
                UInt32(clamping: max(1, options.threads)),
                max(4096, options.memoryLimit)
            )
            savedErrno = errno
            return daemon
        }
        guard let daemon else {
            // libmicrohttpd leaves the failing bind/listen errno in place; 0 means it failed before any syscall.
            return .failure(SystemError(operation: "bind", errno: savedErrno == 0 ? EINVAL : savedErrno))
        }
        return .success(daemon)
    }
}

@available(*, unavailable)
extension HTTPServer: Sendable {}

/// An `HTTPServer`'s daemons on their way to the thread that stops them: used there once, by that thread only.
private struct RunningDaemons {
    let daemons: [OpaquePointer]
    let routeTable: Unmanaged<RouteTable>

    /// Stops every daemon (joining its threads, which finish the requests in flight), then releases the table no
    /// callback can see any more.
    func stop() {
        for daemon in daemons { MHD_stop_daemon(daemon) }
        routeTable.release()
    }
}

/// The routes, shared by the daemon threads through the callback's `cls` pointer.
final class RouteTable: Sendable {
    /// Handlers by exact path.
    let routes: [String: HTTPRouteHandler]

    /// Creates the table.
    init(routes: [String: HTTPRouteHandler]) {
        self.routes = routes
    }

    /// The answer to `request`: the route's, or 404, or 405 for a method other than GET/HEAD.
    func respond(to request: HTTPServerRequest) -> HTTPServerResponse {
        guard let handler = routes[request.path] else {
            return HTTPServerResponse(status: 404, text: "not found\n")
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            var response = HTTPServerResponse(status: 405, text: "method not allowed\n")
            response.headers.append(("Allow", "GET, HEAD"))
            return response
        }
        return handler(request)
    }
}

/// libmicrohttpd's access handler. MHD calls it once the request line and headers are in (`*con_cls` is NULL),
/// again for each chunk of a request body, and once more when the request is complete.
///
/// `GET`/`HEAD` are answered on the final call: answering earlier makes MHD close the connection (it cannot know
/// the request is over), which would defeat keep-alive for scrapers. Any other method is answered on the first
/// call, so MHD sends the 404/405 and closes instead of reading an upload nobody wants; a `GET` that carries a body
/// is treated the same way when its first body chunk arrives.
private let accessHandler: MHD_AccessHandlerCallback = { cls, connection, url, method, _, _, uploadDataSize, conCls in
    guard let cls, let connection, let conCls else { return .NO }
    let pending = UnsafeMutableRawPointer(bitPattern: 1)  // markers only; MHD never dereferences `*con_cls`
    let answered = UnsafeMutableRawPointer(bitPattern: 2)
    let methodName = method.map { String(cString: $0) } ?? ""
    switch conCls.pointee {
    case nil where methodName == "GET" || methodName == "HEAD":
        conCls.pointee = pending
        return .YES
    case answered:
        uploadDataSize?.pointee = 0  // body bytes of a request already answered: drop them
        return .YES
    default:
        uploadDataSize?.pointee = 0
        conCls.pointee = answered
    }
    let table = Unmanaged<RouteTable>.fromOpaque(cls).takeUnretainedValue()
    let request = HTTPServerRequest(method: methodName, path: url.map { String(cString: $0) } ?? "/")
    return queue(table.respond(to: request), on: connection)
}

/// Hands `response` to MHD (which copies the body) and drops our reference.
private func queue(_ response: HTTPServerResponse, on connection: OpaquePointer) -> MHD_Result {
    let created = response.body.withUnsafeBytes { raw in
        MHD_create_response_from_buffer(
            raw.count,
            UnsafeMutableRawPointer(mutating: raw.baseAddress),
            .RESPMEM_MUST_COPY
        )
    }
    guard let created else { return .NO }
    // MHD keeps its own reference while the response is being sent.
    defer { MHD_destroy_response(created) }
    _ = MHD_add_response_header(created, "Content-Type", response.contentType)
    _ = MHD_add_response_header(created, "Cache-Control", "no-store")
    for header in response.headers {
        _ = MHD_add_response_header(created, header.name, header.value)  // rejects CR/LF in values
    }
    return MHD_queue_response(connection, UInt32(clamping: response.status), created)
}
