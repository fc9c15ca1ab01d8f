import Foundation
import Testing

@testable import BridgeEvents
@testable import BridgeSinks

/// The NDJSON output deleted while the bridge runs (`rm events.ndjson`, not a rotation, no SIGHUP). Before: every
/// later line went into the deleted file, where nobody could read it, and counted as delivered — against the release
/// build, 401 changes in 20 s until a SIGHUP (docs/RELIABILITY.md, "Careless or hostile operators").
@Suite struct NDJSONDeletedFileTests {
    @Test func aBatchWrittenIntoADeletedFileIsWrittenAgainIntoANewOne() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ndjson-rm-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("events.ndjson").path
        let sink = try NDJSONSink(path: path, fsync: .interval)
        try await sink.accept([makeEvent(1)])
        try FileManager.default.removeItem(atPath: path)

        await #expect {
            try await sink.accept([makeEvent(2)])
        } throws: { error in
            guard let error = error as? SinkError else { return false }
            return error.isRetriable && error.message.contains("was deleted")
        }
        // The runner's retry of the same batch.
        try await sink.accept([makeEvent(2)])
        try await sink.accept([makeEvent(3)])
        try await sink.close()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "{\"n\":2}\n{\"n\":3}\n")
    }
}
