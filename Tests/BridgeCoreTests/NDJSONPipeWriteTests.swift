import BridgeSystem
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@testable import BridgeEvents
@testable import BridgeSinks

/// A batch into a pipe that takes part of it and then fails. A pipe cannot take back what it took: writing the batch
/// again put a torn line and a second copy of each line before it into the stream (docs/RELIABILITY.md, "Careless or
/// hostile operators").
@Suite struct NDJSONPipeWriteTests {
    /// Events whose lines are together larger than a pipe's 64 KiB buffer.
    private func largeBatch(from first: Int = 0) -> [EncodedEvent] {
        (first..<first + 1000).map { n in
            var event = makeEvent(n)
            event.body = EventBody(Array("{\"n\":\(n),\"pad\":\"\(String(repeating: "x", count: 100))\"}".utf8))
            return event
        }
    }

    private func expectedBytes(_ events: [EncodedEvent]) -> [UInt8] {
        events.flatMap { $0.body.bytes + [0x0A] }
    }

    /// Reads `descriptor` on a thread of its own (never a thread of Swift's pool) until end of file, then closes it.
    private final class PipeReader: Sendable {
        private let bytes = Mutex<[UInt8]>([])
        private let finished = DispatchSemaphore(value: 0)

        /// With `writeEnd`, reading starts only once the pipe is full (its write end no longer writable), so that
        /// the writer certainly meets a full pipe.
        init(_ descriptor: Int32, stopAfter limit: Int = .max, startWhenFull writeEnd: Int32? = nil) {
            Thread.detachNewThread { self.read(descriptor, limit, writeEnd) }
        }

        private func read(_ descriptor: Int32, _ limit: Int, _ writeEnd: Int32?) {
            while let writeEnd {
                var entry = pollfd(fd: writeEnd, events: Int16(POLLOUT), revents: 0)
                if poll(&entry, 1, 0) == 0 { break }
                usleep(1000)
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            var total = 0
            while total < limit {
                let count = chunk.withUnsafeMutableBytes {
                    Glibc.read(descriptor, $0.baseAddress, min($0.count, limit - total))
                }
                if count < 0 && errno == EINTR { continue }
                if count < 0 && errno == EAGAIN {
                    var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                    _ = poll(&entry, 1, 1000)
                    continue
                }
                if count <= 0 { break }
                bytes.withLock { $0.append(contentsOf: chunk.prefix(count)) }
                total += count
            }
            close(descriptor)
            finished.signal()
        }

        /// Everything read, once the reader has stopped (nil when it has not within `seconds`).
        func result(within seconds: Int = 60) -> [UInt8]? {
            finished.wait(timeout: .now() + .seconds(seconds)) == .success ? bytes.withLock { $0 } : nil
        }
    }

    /// stdout is an open file description shared with whoever started the bridge, which may have made it
    /// non-blocking. Before: a full pipe failed the write with EAGAIN after a part of the batch was out.
    @Test func aNonBlockingPipeTakesTheWholeBatchOnce() async throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        try #require(fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK) == 0)
        let reader = PipeReader(ends[0], startWhenFull: ends[1])
        let sink = NDJSONSink(standardOutput: ends[1], fsync: .never)
        let events = largeBatch()
        defer { close(ends[1]) }
        try await sink.accept(events)
        close(ends[1])
        ends[1] = -1
        let read = try #require(reader.result())
        let sameBytes = read == expectedBytes(events)
        #expect(sameBytes, "\(read.count) bytes read of \(expectedBytes(events).count)")
    }

    /// A named pipe whose reader goes away part-way through a batch (EPIPE, retried for a `path:` sink): what it
    /// took stays in the pipe for the next reader, so the retry writes only the rest. Before: the next reader got the
    /// torn start, then the whole batch again.
    @Test func aNamedPipeWhoseReaderLeftGetsOnlyTheRestOfTheBatch() async throws {
        ignoreSIGPIPE()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ndjson-epipe-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("events.fifo").path
        try #require(mkfifo(path, 0o600) == 0)
        let firstReader = open(path, O_RDONLY | O_NONBLOCK)
        try #require(firstReader >= 0)
        let sink = try NDJSONSink(path: path, fsync: .never)
        let events = largeBatch()
        // The first reader takes 16 KiB and leaves; the writer, blocked on the full pipe, fails part-way.
        let first = PipeReader(firstReader, stopAfter: 16 << 10)
        await #expect {
            try await sink.accept(events)
        } throws: { error in
            (error as? SinkError)?.isRetriable == true
        }
        let taken = try #require(first.result())
        let secondReader = open(path, O_RDONLY | O_NONBLOCK)
        try #require(secondReader >= 0)
        let second = PipeReader(secondReader)
        try await sink.accept(events)
        // The sink goes on with the next batch as usual.
        let next = largeBatch(from: 1000)
        try await sink.accept(next)
        try await sink.close()
        let rest = try #require(second.result())
        let expected = expectedBytes(events) + expectedBytes(next)
        #expect(taken.count + rest.count == expected.count, "\(taken.count) + \(rest.count) of \(expected.count)")
        let sameBytes = taken + rest == expected
        #expect(sameBytes, "the stream is not the two batches, each once")
    }
}
