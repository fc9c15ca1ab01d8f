import BridgeSystem

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A raw TCP client for the server tests: sends exactly the bytes a test wants (partial, malformed, huge) and reads
/// whatever comes back until the server closes or a deadline passes.
final class RawClient {
    let socket: Socket

    init(_ address: SocketAddress) throws {
        socket = try Socket.connect(to: address, deadline: .now + .seconds(5))
    }

    /// A blocking connection to `address` from `source` (an address of this host: another client, as the server
    /// sees it; every 127.x.y.z is loopback).
    init(_ address: SocketAddress, from source: SocketAddress) throws {
        let fd = Glibc.socket(source.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError(operation: "socket", errno: errno) }
        let bound = source.withUnsafeSocketAddressBytes { raw, length in
            bind(fd, raw.assumingMemoryBound(to: sockaddr.self), socklen_t(length))
        }
        let connected = bound == 0 ? address.withUnsafeSocketAddressBytes { raw, length in
            Glibc.connect(fd, raw.assumingMemoryBound(to: sockaddr.self), socklen_t(length))
        } : -1
        guard connected == 0 else {
            let code = errno
            close(fd)
            throw SystemError(operation: bound == 0 ? "connect" : "bind", errno: code)
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        socket = Socket(adopting: fd, remoteAddress: address)
    }

    /// Sends every byte (waiting while the kernel buffer is full); false when the server closed the connection.
    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Sends every byte; false when the server closed the connection (EPIPE/ECONNRESET).
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let result: SocketIOResult
            do {
                result = try bytes[offset...].withUnsafeBytes { try socket.send($0) }
            } catch {
                return false
            }
            switch result {
            case .transferred(let count): offset += count
            case .wouldBlock: _ = try? socket.wait(for: .writable, until: .now + .seconds(5))
            case .endOfStream: return false
            }
        }
        return true
    }

    /// Reads until the server closes the connection or `timeout` passes; `closed` says which.
    func readAll(timeout: Duration = .seconds(5)) -> (bytes: [UInt8], closed: Bool) {
        readUntil(timeout: timeout) { _ in false }
    }

    /// Reads until `done(received)` holds, the server closes, or `timeout` passes.
    func readUntil(timeout: Duration = .seconds(5), _ done: ([UInt8]) -> Bool) -> (bytes: [UInt8], closed: Bool) {
        let deadline = ContinuousClock.now + timeout
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while ContinuousClock.now < deadline {
            guard (try? socket.wait(for: .readable, until: deadline)) == true else { break }
            let result = try? buffer.withUnsafeMutableBytes { try socket.receive(into: $0) }
            switch result {
            case .transferred(let count):
                received += buffer[..<count]
                if done(received) { return (received, false) }
            case .wouldBlock: continue
            case .endOfStream, nil: return (received, true)
            }
        }
        return (received, false)
    }

    /// Reads one complete response (headers plus `Content-Length` bytes of body).
    func readResponse(timeout: Duration = .seconds(5)) -> RawResponse? {
        let result = readUntil(timeout: timeout) { RawResponse(parsing: $0)?.isComplete == true }
        return RawResponse(parsing: result.bytes)
    }
}

/// A parsed HTTP/1.1 response (enough for the tests: status, headers, body by Content-Length).
struct RawResponse {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]
    var isComplete: Bool

    var text: String { String(decoding: body, as: UTF8.self) }

    init?(parsing bytes: [UInt8]) {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = bytes.firstRange(of: separator) else { return nil }
        let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return nil }
        self.status = status
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let value = line[line.index(after: colon)...].drop { $0 == " " }
            headers[line[..<colon].lowercased()] = String(value)
        }
        self.headers = headers
        let rest = Array(bytes[end.upperBound...])
        let length = headers["content-length"].flatMap { Int($0) } ?? 0
        body = Array(rest.prefix(length))
        isComplete = rest.count >= length
    }
}

extension String {
    fileprivate func components(separatedBy separator: String) -> [String] {
        var parts: [String] = []
        var rest = Substring(self)
        while let range = rest.firstRange(of: separator) {
            parts.append(String(rest[..<range.lowerBound]))
            rest = rest[range.upperBound...]
        }
        parts.append(String(rest))
        return parts
    }
}
