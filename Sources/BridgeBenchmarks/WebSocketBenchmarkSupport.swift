import BridgeSystem
import BridgeWebSocket
import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// CPU time of the calling thread, in seconds (`CLOCK_THREAD_CPUTIME_ID`): unaffected by other processes on a
/// shared machine, and what "messages per second on one core" means.
func threadCPUSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// The frames both WebSocket benchmarks decode: server text frames (unmasked) of exactly `payloadSize` bytes,
/// shaped like Directus subscription events.
enum WebSocketBenchmarkStream {
    static let payloadSize = 300

    /// One payload per index, all `payloadSize` bytes of JSON-like ASCII.
    static func payload(_ index: Int) -> [UInt8] {
        var text = #"{"type":"subscription","event":"update","uid":"articles","data":[{"id":\#(index),"title":"#
        text += #""Benchmark article","status":"published","body":""#
        let closing = #""}]}"#
        let filler = payloadSize - text.utf8.count - closing.utf8.count
        text += String(repeating: "x", count: max(0, filler)) + closing
        return Array(text.utf8)
    }

    /// An unmasked server frame (the benchmark plays the server; the client code under test never encodes these).
    static func frame(_ payload: [UInt8], opcode: UInt8 = 0x1) -> [UInt8] {
        var bytes: [UInt8] = [0x80 | opcode]
        if payload.count < 126 {
            bytes.append(UInt8(payload.count))
        } else {
            bytes += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        return bytes + payload
    }

    /// `count` frames back to back.
    static func make(count: Int) -> [UInt8] {
        var stream: [UInt8] = []
        stream.reserveCapacity(count * (payloadSize + 4))
        for index in 0..<count { stream += frame(payload(index)) }
        return stream
    }
}

/// A loopback WebSocket "server" that answers one upgrade per connection and then writes a prepared stream as
/// fast as the reader takes it, followed by a close frame. Runs on its own thread.
final class LoopbackFrameSender: @unchecked Sendable {
    // @unchecked: `listener` and `stream` are immutable; the thread only reads them.
    let listener: ListeningSocket
    private let stream: [UInt8]
    private let connections: Int

    /// Listens on 127.0.0.1 and serves `connections` clients one after another.
    init(stream: [UInt8], connections: Int) throws {
        listener = try ListeningSocket(binding: SocketAddress(ipAddress: "127.0.0.1", port: 0)!)
        self.stream = stream
        self.connections = connections
        let thread = Thread { [self] in self.serve() }
        thread.stackSize = 1 << 20
        thread.start()
    }

    var port: Int { listener.port }

    private func serve() {
        for _ in 0..<connections {
            guard let socket = try? listener.accept(until: .now + .seconds(60)) else { return }
            try? serveOne(socket)
        }
    }

    private func serveOne(_ socket: Socket) throws {
        let deadline = ContinuousClock.now + .seconds(120)
        var request: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !request.containsHeadEnd {
            guard try socket.wait(for: .readable, until: deadline) else { return }
            switch try chunk.withUnsafeMutableBytes({ try socket.receive(into: $0) }) {
            case .transferred(let count): request += chunk[..<count]
            case .wouldBlock: continue
            case .endOfStream: return
            }
        }
        let head = String(decoding: request, as: UTF8.self)
        let keyLine = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-key:") } ?? ""
        let key = keyLine.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        let response =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(WebSocketBenchmarkAccept.value(forKey: key))\r\n\r\n"
        try write(Array(response.utf8), to: socket, deadline: deadline)
        try write(stream, to: socket, deadline: deadline)
        try write([0x88, 0x02, 0x03, 0xE8], to: socket, deadline: deadline)
        // Wait for the client's close (or its end of stream), then hang up.
        _ = try? socket.wait(for: .readable, until: .now + .seconds(5))
        socket.shutdown()
    }

    private func write(_ bytes: [UInt8], to socket: Socket, deadline: ContinuousClock.Instant) throws {
        try bytes.withUnsafeBytes { all in
            var offset = 0
            while offset < all.count {
                let end = min(all.count, offset + (256 << 10))
                switch try socket.send(UnsafeRawBufferPointer(rebasing: all[offset..<end])) {
                case .transferred(let count): offset += count
                case .wouldBlock, .endOfStream:
                    guard try socket.wait(for: .writable, until: deadline) else {
                        throw SystemError(operation: "send", errno: ETIMEDOUT)
                    }
                }
            }
        }
    }
}

extension [UInt8] {
    fileprivate var containsHeadEnd: Bool {
        guard count >= 4 else { return false }
        for index in 0...(count - 4)
        where self[index] == 13 && self[index + 1] == 10 && self[index + 2] == 13
            && self[index + 3] == 10
        {
            return true
        }
        return false
    }
}

/// Runs one of the Python peers in Tests/tools/ws_peers and returns its JSON result line, or nil (with a note on
/// stderr) when Python or the script is unavailable.
enum PythonPeer {
    static var python: String {
        if let path = ProcessInfo.processInfo.environment["BRIDGE_PYTHON"], !path.isEmpty { return path }
        return FileManager.default.currentDirectoryPath + "/.venv/bin/python"
    }

    static func run(_ script: String, _ arguments: [String]) -> [String: Any]? {
        let scriptPath = FileManager.default.currentDirectoryPath + "/Tests/tools/ws_peers/" + script
        guard FileManager.default.isExecutableFile(atPath: python), FileManager.default.fileExists(atPath: scriptPath)
        else {
            FileHandleStderr.write("peer skipped: no \(python) or \(scriptPath) (run from the repository root)\n")
            return nil
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [scriptPath] + arguments
        let output = Pipe()
        process.standardOutput = output
        do { try process.run() } catch {
            FileHandleStderr.write("peer \(script) did not start: \(error)\n")
            return nil
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0,
            let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else {
            FileHandleStderr.write("peer \(script) failed: \(String(decoding: data, as: UTF8.self))\n")
            return nil
        }
        return json
    }
}
