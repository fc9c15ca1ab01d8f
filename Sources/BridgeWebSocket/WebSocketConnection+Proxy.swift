import BridgeSystem
import BridgeTLS

extension WebSocketConnection {
    /// Opens a tunnel to `url`'s host and port through `proxy` over `stream`, a connection to the proxy: writes the
    /// `CONNECT` request and reads the answer (`ProxyTunnel` bounds it) until `deadline`. Throws `WebSocketError`
    /// (`.proxyRefused` with the status, `.invalidHandshake`, `.timeout`, `.io`) naming the proxy as URLs are shown,
    /// or `CancellationError`; the stream is shut down on every failure.
    static func openTunnel(
        _ stream: any ByteStream,
        through proxy: HTTPProxy,
        to url: WebSocketURL,
        deadline: ContinuousClock.Instant,
        isCancelled: () -> Bool
    ) throws {
        var tunnel = ProxyTunnel(host: url.host, port: url.port, basicCredentials: proxy.basicCredentials)
        do {
            try tunnel.request.withUnsafeBytes { try stream.write($0, deadline: deadline) }
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let step: ProxyTunnel.Step
                switch try readStep(stream, into: &chunk, until: deadline, isCancelled: isCancelled) {
                case .read(let count): step = tunnel.received(chunk[..<count])
                case .timedOut:
                    throw WebSocketError(.timeout, "proxy \(proxy) did not answer CONNECT \(url.hostHeader) in time")
                case .endOfStream:
                    throw WebSocketError(.invalidHandshake, "proxy \(proxy) closed the connection during CONNECT")
                }
                switch step {
                case .needMore: continue
                case .established: return
                case .refused(let status, let reason):
                    let phrase = reason.isEmpty ? "" : " \(reason)"  // the proxy's words, cleaned where shown
                    throw WebSocketError(
                        .proxyRefused, "proxy \(proxy) refused CONNECT \(url.hostHeader) with HTTP \(status)\(phrase)",
                        status: status)
                case .invalid(let why):
                    throw WebSocketError(.invalidHandshake, "proxy \(proxy) broke CONNECT \(url.hostHeader): \(why)")
                }
            }
        } catch let error as CancellationError {
            stream.shutdown()
            throw error
        } catch {
            stream.shutdown()
            throw WebSocketError.transport(error, while: "CONNECT through proxy \(proxy)")
        }
    }

    /// Reads into `chunk` until `limit`, in steps of at most 250 ms to notice cancellation (`.timedOut` only once
    /// `limit` has passed).
    static func readStep(
        _ stream: any ByteStream,
        into chunk: inout [UInt8],
        until limit: ContinuousClock.Instant,
        isCancelled: () -> Bool
    ) throws -> StreamReadResult {
        while true {
            if isCancelled() { throw CancellationError() }
            let step = min(limit, ContinuousClock.now + .milliseconds(250))
            let result = try chunk.withUnsafeMutableBytes { try stream.read(into: $0, deadline: step) }
            if case .timedOut = result, ContinuousClock.now < limit { continue }
            return result
        }
    }
}
