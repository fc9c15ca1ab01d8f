import BridgeJSON
import BridgeSystem
import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The JSON hot path: one Directus socket frame in, one NDJSON event line per item out.
///
/// Ours: `DirectusServerMessage` decode (full validation) + primary key + `EventLineWriter` (item bytes copied).
/// Peers, on the same frames: Foundation `JSONSerialization` parse of the frame, then per item a dictionary of the
/// event fields re-encoded with `JSONSerialization.data(withJSONObject:)` — the straightforward way to write the
/// bridge, in this process; and out of process (`JSONHotPathPeer`) C++ simdjson (DOM and On-Demand) and Python
/// orjson. Rates are items per second of the measuring thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), so other work
/// on a shared machine does not distort them; the best of several runs is reported. A peer that is missing or
/// fails is reported after the others ran, and the benchmark then fails.
enum JSONHotPathBenchmark {
    static let peerName = "Foundation JSONSerialization parse + re-encode"

    /// One article as Directus sends it for `fields: ["*"]`: about 300 bytes (escapes and non-ASCII included).
    static func item(id: Int) -> String {
        #"{"id":\#(id),"status":"published","user_created":"8f14e45f-ceea-467f-a0e6-7f3d2c1b0a99","#
            + #""date_created":"2026-12-02T10:15:00.123Z","date_updated":null,"title":"Hello from the bridge","#
            + #""summary":"A short summary with \"quotes\" and UTF-8: café, 日本","#
            + #""tags":["news","tech"],"rating":4.5,"views":1024}"#
    }

    static let createFrame = Array(
        (#"{"type":"subscription","event":"create","data":["# + item(id: 4711) + #"],"uid":"articles"}"#).utf8
    )
    static let updateFrame = Array(
        (#"{"type":"subscription","event":"update","data":["#
            + (0..<10).map { item(id: 5000 + $0) }.joined(separator: ",") + #"],"uid":"articles"}"#).utf8
    )

    /// `json-hot-path` runs everything; `json-hot-path profile` runs only our path for a while (for `perf record`).
    @Sendable static func run(_ arguments: [String]) async throws {
        if arguments.first == "profile" {
            let rate = try ours(frame: createFrame, messages: 5_000_000, withIDs: true)
            FileHandleStderr.write("json-hot-path profile: \(Int(rate)) items/s\n")
            return
        }
        let itemBytes = item(id: 4711).utf8.count
        FileHandleStderr.write(
            "json-hot-path: item \(itemBytes) bytes, create frame \(createFrame.count) bytes, "
                + "update frame \(updateFrame.count) bytes (10 items)\n"
        )
        try verifyOutputsAgree()
        let outside = [JSONHotPathPeer.simdjsonDOM, .simdjsonOnDemand, .orjson]
        var failures: [String] = []
        for peer in outside {
            do { try verifyLinesAgree(try peer.lines(frame: updateFrame), source: updateFrame) } catch {
                failures.append("\(peer.name): \(error)")
            }
        }
        for (label, frame, items) in [("create 1 item", createFrame, 1), ("update 10 items", updateFrame, 10)] {
            let oursRate = try best(of: 5) { try ours(frame: frame, messages: 400_000 / items, withIDs: false) }
            let idRate = try best(of: 3) { try ours(frame: frame, messages: 200_000 / items, withIDs: true) }
            let peerRate = try best(of: 3) { try peer(frame: frame, messages: 20_000 / items) }
            for (metric, value, peerValue) in [
                ("items/s, \(label): decode + key + write", oursRate, peerRate),
                ("ns/item, \(label): decode + key + write", 1e9 / oursRate, 1e9 / peerRate),
            ] {
                BenchmarkResult(
                    benchmark: "json-hot-path",
                    metric: metric,
                    value: value,
                    unit: metric.hasPrefix("ns") ? "ns" : "1/s",
                    peer: peerName,
                    peerValue: peerValue
                ).emit()
            }
            for peer in outside where !failures.contains(where: { $0.hasPrefix(peer.name) }) {
                do {
                    let peerRate = try peer.rate(frame: frame, messages: 400_000 / items, runs: 5)
                    BenchmarkResult(
                        benchmark: "json-hot-path", metric: "items/s, \(label): decode + key + write", value: oursRate,
                        unit: "1/s", peer: peer.name, peerValue: peerRate
                    ).emit()
                } catch {
                    failures.append("\(peer.name): \(error)")
                }
            }
            BenchmarkResult(
                benchmark: "json-hot-path",
                metric: "items/s, \(label): same + UUIDv7 id + clock read",
                value: idRate,
                unit: "1/s"
            ).emit()
        }
        if !failures.isEmpty {
            throw BenchmarkError(message: "json-hot-path peers failed: " + failures.joined(separator: "; "))
        }
    }

    /// The best items/s of `runs` runs (the least disturbed by caches and frequency changes).
    static func best(of runs: Int, _ body: () throws -> Double) rethrows -> Double {
        var best = 0.0
        for _ in 0..<runs { best = max(best, try body()) }
        return best
    }

    static func fields(key: String, id: EventIdentifier, event: EventLineFields.Event, receivedAt: Timestamp)
        -> EventLineFields
    {
        EventLineFields(
            identifier: id,
            event: event,
            collection: "articles",
            key: key,
            origin: .live,
            seq: nil,
            time: receivedAt,
            receivedAt: receivedAt,
            subscription: "articles"
        )
    }

    /// Items per second through decode + key + line writing.
    static func ours(frame: [UInt8], messages: Int, withIDs: Bool) throws -> Double {
        var writer = EventLineWriter(capacity: 64 * 1024)
        var generator = UUIDv7Generator()
        var items = 0
        let fixedTime = Timestamp.now()
        let seconds = try measureThreadCPUSeconds {
            for _ in 0..<messages {
                let message = try DirectusServerMessage(decoding: frame)
                guard case .array(let ranges) = message.data else { continue }
                let event: EventLineFields.Event = message.event == .update ? .update : .create
                let receivedAt = withIDs ? Timestamp.now() : fixedTime
                for range in ranges {
                    guard let key = range.member("id", in: frame)?.keyString(in: frame) else { continue }
                    // The id as the socket reader holds it: the UUID, written into the line without a `String`.
                    let id: EventIdentifier = withIDs ? .live(generator.next(at: receivedAt)) : .text("evt_fixed")
                    writer.appendLine(
                        fields(key: key, id: id, event: event, receivedAt: receivedAt),
                        data: range,
                        in: frame
                    )
                    items += 1
                }
                // The reader hands each batch of lines to a sink and reuses the buffer.
                if writer.bytes.count > 48 * 1024 { writer.removeAll() }
            }
        }
        blackHole(writer.bytes)
        return Double(items) / seconds
    }

    /// Items per second through Foundation: parse the frame, re-encode one event object per item.
    static func peer(frame: [UInt8], messages: Int) throws -> Double {
        let data = Data(frame)
        var output = Data()
        var items = 0
        let receivedAt = Timestamp.now().rfc3339
        let seconds = try measureThreadCPUSeconds {
            for _ in 0..<messages {
                guard let message = try JSONSerialization.jsonObject(with: data) as? [String: Any],
                    let elements = message["data"] as? [[String: Any]]
                else { continue }
                let event = message["event"] as? String ?? "create"
                for element in elements {
                    let key = (element["id"] as? NSNumber)?.stringValue ?? (element["id"] as? String) ?? ""
                    let line: [String: Any] = [
                        "id": "evt_fixed", "type": "directus.items." + event, "event": event, "collection": "articles",
                        "key": key, "data": element, "origin": "live", "seq": NSNull(), "time": receivedAt,
                        "received_at": receivedAt, "subscription": "articles",
                    ]
                    output.append(try JSONSerialization.data(withJSONObject: line))
                    output.append(0x0A)
                    items += 1
                }
                if output.count > 48 * 1024 { output.removeAll(keepingCapacity: true) }
            }
        }
        blackHole(output)
        return Double(items) / seconds
    }

    /// CPU seconds the current thread spends in `body` (no suspension points inside, so it stays on one thread).
    static func measureThreadCPUSeconds(_ body: () throws -> Void) rethrows -> Double {
        var start = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start)
        try body()
        var end = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end)
        return Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
    }

    /// Both paths must describe the same events, or the comparison means nothing.
    static func verifyOutputsAgree() throws {
        var writer = EventLineWriter()
        let time = Timestamp.now()
        let message = try DirectusServerMessage(decoding: updateFrame)
        guard case .array(let ranges) = message.data, ranges.count == 10 else { throw BenchmarkSetupError() }
        for range in ranges {
            let key = range.member("id", in: updateFrame)?.keyString(in: updateFrame) ?? ""
            writer.appendLine(
                fields(key: key, id: .text("evt_fixed"), event: .update, receivedAt: time),
                data: range,
                in: updateFrame
            )
        }
        try verifyLinesAgree(writer.bytes.split(separator: 0x0A).map { Array($0) }, source: updateFrame)
    }

    /// `lines` must carry the items of `frame`, in order, as `data`, with each item's `id` as `key`.
    static func verifyLinesAgree(_ lines: [[UInt8]], source frame: [UInt8]) throws {
        let source = try JSONSerialization.jsonObject(with: Data(frame)) as? [String: Any]
        let items = source?["data"] as? [NSDictionary] ?? []
        guard lines.count == items.count else { throw BenchmarkSetupError() }
        for (line, item) in zip(lines, items) {
            let parsed = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any]
            guard let data = parsed?["data"] as? NSDictionary, data == item,
                parsed?["key"] as? String == (item["id"] as? NSNumber)?.stringValue
            else { throw BenchmarkSetupError() }
        }
    }

    struct BenchmarkSetupError: Error {}
}
