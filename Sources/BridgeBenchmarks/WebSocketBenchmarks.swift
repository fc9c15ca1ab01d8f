import BridgeSystem
import BridgeTLS
import BridgeWebSocket
import Foundation

/// `ws-codec`: the client's receive pipeline (frame parsing, reassembly, UTF-8 validation, one copy into each
/// message) over an in-memory stream of 300-byte text frames, read in 64 KiB chunks as from a socket.
/// Timed in thread CPU time, best of five runs.
/// Peer: the `websockets` library's sans-I/O protocol decoding the same stream (Tests/tools/ws_peers/bench_codec.py).
enum WebSocketCodecBenchmark {
    @Sendable static func run(_ arguments: [String]) async throws {
        let frames = arguments.first.flatMap(Int.init) ?? 200_000
        let chunkSize = 64 << 10
        let stream = WebSocketBenchmarkStream.make(count: frames)
        var best = Double.infinity
        var decoded = 0
        for _ in 0..<5 {
            var decoder = MessageDecoder(maxMessageSize: 16 << 20)
            var messages: [WebSocketMessage] = []
            messages.reserveCapacity(1024)
            decoded = 0
            let cpuStart = threadCPUSeconds()
            try stream.withUnsafeBytes { all in
                var start = 0
                while start < all.count {
                    let chunk = UnsafeRawBufferPointer(rebasing: all[start..<min(all.count, start + chunkSize)])
                    var offset = 0
                    repeat {  // returns early only for control frames, which this stream has none of
                        _ = try decoder.decode(chunk, offset: &offset, into: &messages)
                        decoded += messages.count
                        messages.removeAll(keepingCapacity: true)
                    } while offset < chunk.count
                    start += chunkSize
                }
            }
            best = min(best, threadCPUSeconds() - cpuStart)
        }
        precondition(decoded == frames, "decoded \(decoded) of \(frames) frames")
        let megabytes = Double(stream.count) / 1e6

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ws-codec-\(getpid()).bin")
        try Data(stream).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let peer = PythonPeer.run("bench_codec.py", [file.path, String(chunkSize)])
        let peerSeconds = peer?["seconds"] as? Double
        let peerName = "python websockets 17.4 Protocol (sans-I/O)"
        BenchmarkResult(
            benchmark: "ws-codec",
            metric: "frames/s",
            value: Double(frames) / best,
            unit: "1/s",
            peer: peerName,
            peerValue: peerSeconds.map { Double(frames) / $0 }
        ).emit()
        BenchmarkResult(
            benchmark: "ws-codec",
            metric: "MB/s",
            value: megabytes / best,
            unit: "MB/s",
            peer: peerName,
            peerValue: peerSeconds.map { megabytes / $0 }
        ).emit()

        // The send side: masking 300-byte payloads with fresh CSPRNG keys (pooled RAND_bytes).
        var encoder = FrameEncoder()
        let payload = WebSocketBenchmarkStream.payload(1)
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: 512, alignment: 16)
        defer { output.deallocate() }
        let encodeCount = 1_000_000
        var written = 0
        let encodeSeconds = payload.withUnsafeBytes { bytes in
            measureSeconds {
                for _ in 0..<encodeCount { written &+= encoder.encode(opcode: .text, payload: bytes, into: output) }
            }
        }
        blackHole(written)
        BenchmarkResult(
            benchmark: "ws-codec",
            metric: "encoded frames/s",
            value: Double(encodeCount) / encodeSeconds,
            unit: "1/s"
        ).emit()

        // Why keys come from a pool: one RAND_bytes call per 4-byte key, for comparison.
        var key: UInt32 = 0
        let randomCalls = 1_000_000
        let randomSeconds = withUnsafeMutableBytes(of: &key) { keyBytes in
            measureSeconds { for _ in 0..<randomCalls { Crypto.fillRandom(keyBytes) } }
        }
        blackHole(key)
        BenchmarkResult(
            benchmark: "ws-codec",
            metric: "RAND_bytes(4) calls/s",
            value: Double(randomCalls) / randomSeconds,
            unit: "1/s"
        ).emit()
    }
}

/// `ws-loopback`: `WebSocketConnection.receiveBatch` reading 300-byte text frames over loopback TCP from a local
/// sender thread, end to end (syscalls, decoding, one copy per message). Peer: the `websockets` asyncio client
/// reading the same stream from the same sender (Tests/tools/ws_peers/bench_client.py).
enum WebSocketLoopbackBenchmark {
    @Sendable static func run(_ arguments: [String]) async throws {
        let count = arguments.first.flatMap(Int.init) ?? 300_000
        let stream = WebSocketBenchmarkStream.make(count: count)
        let sender = try LoopbackFrameSender(stream: stream, connections: 2)
        let url = try WebSocketURL("ws://127.0.0.1:\(sender.port)/")
        let connection = try await WebSocketConnection.connect(to: url, logger: .silent)
        let (seconds, cpuSeconds, bytes) = try await BlockingExecutor.shared.perform {
            var received = 0
            var bytes = 0
            let start = ContinuousClock.now
            let cpuStart = threadCPUSeconds()
            while received < count {
                let batch = try connection.receiveBatch(timeout: .seconds(10))
                if batch.isEmpty { throw SystemError(operation: "receive", errno: 110) }
                received += batch.count
                for message in batch { bytes += message.bytes.count }
            }
            let elapsed = ContinuousClock.now - start
            let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            return (wall, threadCPUSeconds() - cpuStart, bytes)
        }
        await connection.close()
        precondition(bytes == count * WebSocketBenchmarkStream.payloadSize, "payload bytes lost")

        let peer = PythonPeer.run("bench_client.py", ["ws://127.0.0.1:\(sender.port)/", String(count)])
        let peerSeconds = peer?["seconds"] as? Double
        let peerName = "python websockets 17.4 asyncio client"
        let megabytes = Double(count * (WebSocketBenchmarkStream.payloadSize + 4)) / 1e6
        BenchmarkResult(
            benchmark: "ws-loopback",
            metric: "messages/s",
            value: Double(count) / seconds,
            unit: "1/s",
            peer: peerName,
            peerValue: peerSeconds.map { Double(count) / $0 }
        ).emit()
        BenchmarkResult(
            benchmark: "ws-loopback",
            metric: "MB/s",
            value: megabytes / seconds,
            unit: "MB/s",
            peer: peerName,
            peerValue: peerSeconds.map { megabytes / $0 }
        ).emit()
        BenchmarkResult(
            benchmark: "ws-loopback",
            metric: "messages per reader CPU second",
            value: Double(count) / cpuSeconds,
            unit: "1/s",
            peer: peerName + " (process CPU)",
            peerValue: (peer?["cpu_seconds"] as? Double).map { Double(count) / $0 }
        ).emit()
    }
}

/// The accept value for the sender's handshake answers.
enum WebSocketBenchmarkAccept {
    static func value(forKey key: String) -> String { HandshakeRequest.acceptValue(forKey: key) }
}
