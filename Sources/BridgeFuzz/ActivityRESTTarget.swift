import BridgeConfig
import BridgeCore
import BridgeEvents
import BridgeDirectus
import BridgeActivity
import BridgeSinks
import BridgeHTTP
import BridgeJSON
import BridgeSystem
import Dispatch
import Synchronization

/// Directus REST answers through the activity reader's reads: `DirectusClient` decoding, `DirectusActivitySource`
/// (activity rows with revision deltas, items, existence checks, revision snapshots, snapshot pages) and
/// `ActivityEventBuilder`, which turns them into event lines.
///
/// Input: answers separated by 0xFF, handed out in request order; an answer's first byte picks its status (200,
/// 200, 200, 403, 400, 401, 500, 204 by its low three bits), the rest is its body. When the answers run out,
/// every request gets `{"data":[]}`.
///
/// Invariants:
/// - Nothing traps, whatever the answers (errors are `DirectusError`s).
/// - Every event line is a JSON object on one line (a server that pretty-prints its answers must not split it)
///   whose `id`, `seq`, `key`, `collection` and `subscription` are those of an activity row and a subscription that
///   wants it, in activity order.
/// - A subscription limited to `fields: [title, author.name]` never carries another top-level field in `delta`
///   (docs/RELIABILITY.md, defect 4: fields outside `query.fields` never leave the bridge). `data` is left out of this check: Directus shapes it by the
///   query itself (functions such as `year(date_created)` and aliases name fields that `fields` does not list),
///   see `FieldAllowance`.
enum ActivityRESTTarget {
    static let target = FuzzTarget(
        name: "activity-rest",
        summary: "activity/revision/items REST answers through the activity source and event builder",
        run: run
    )

    /// Hands out scripted answers in request order.
    final class ScriptedTransport: HTTPTransport {
        private let answers: Mutex<[HTTPResponse]>

        init(_ answers: [HTTPResponse]) {
            self.answers = Mutex(answers.reversed())
        }

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            answers.withLock { $0.popLast() } ?? HTTPResponse(status: 200, body: Array(#"{"data":[]}"#.utf8))
        }
    }

    static let statuses = [200, 200, 200, 403, 400, 401, 500, 204]
    /// The top-level fields the limited subscription allows.
    static let limitedFields: Set<String> = ["title", "author"]

    static let subscriptions: [ActivitySubscription] = [
        ActivitySubscription(
            uid: "limited", collection: "posts", events: [.create, .update, .delete],
            query: ItemQuery(
                collection: "posts", primaryKey: "id",
                query: .object([
                    ("fields", .array([.string("title"), .string("author.name")])),
                    ("filter", .object([("status", .object([("_eq", .string("published"))]))])),
                ])),
            snapshot: false),
        ActivitySubscription(
            uid: "all", collection: "posts", events: [.create, .update],
            query: ItemQuery(collection: "posts", primaryKey: "id", query: nil), snapshot: true),
        ActivitySubscription(
            uid: "pages", collection: "pages", events: [.create, .update, .delete],
            query: ItemQuery(collection: "pages", primaryKey: "slug", query: .object([("fields", .string("*"))])),
            snapshot: false),
    ]

    static func run(_ bytes: UnsafeRawBufferPointer) {
        let answers = Array(bytes).split(separator: 0xFF, omittingEmptySubsequences: false).map { part in
            HTTPResponse(status: statuses[Int((part.first ?? 0) & 7)], body: Array(part.dropFirst()))
        }
        let client = DirectusClient(
            baseURL: "http://directus.test", transport: ScriptedTransport(answers), timeout: .seconds(5))
        let auth = AuthSession(
            credentials: .staticToken("token"), client: client, logger: Logger(label: "fuzz", handler: NullLogHandler()))
        let source = DirectusActivitySource(api: DirectusAPI(client: client, auth: auth))
        let builder = ActivityEventBuilder(targets: subscriptions.map { .init(subscription: $0, startID: 0) })
        let receivedAt = Timestamp(microsecondsSinceEpoch: 1_700_000_000_000_000)
        waitFor {
            do throws(DirectusError) {
                let rows = try await source.activity(after: 0, limit: 100)
                let output = try await builder.events(
                    for: rows, origin: .live, source: source, receivedAt: receivedAt)
                check(output.events, rows: rows)
                _ = try await source.itemsPage(subscriptions[0].query, after: .number(JSONNumber(7)), limit: 10)
                _ = try await source.newestActivityID()
            } catch {}
        }
    }

    /// Runs `body` to completion from synchronous code (the scripted transport never waits).
    static func waitFor(_ body: @escaping @Sendable () async -> Void) {
        let done = DispatchSemaphore(value: 0)
        Task {
            await body()
            done.signal()
        }
        done.wait()
    }

    static func check(_ events: [EncodedEvent], rows: [ActivityRow]) {
        // A broken server may repeat an id: an event must match one of the rows with its id.
        let rowsByID = Dictionary(grouping: rows, by: \.id)
        var lastSeq: Int64 = .min
        for event in events {
            require(!event.body.contains(0x0A) && !event.body.contains(0x0D), "an event line spans several lines")
            guard case .object(let line)? = try? JSONValue.parse(event.body.bytes) else {
                fatalError("invariant broken: an event body that is not a JSON object")
            }
            guard let seq = line["seq"]?.int64Value, let candidates = rowsByID[seq] else {
                fatalError("invariant broken: an event without the seq of a row read: \(line["seq"] ?? .null)")
            }
            require(seq >= lastSeq, "events out of activity order")
            lastSeq = seq
            let uid = line["subscription"]?.stringValue
            guard let subscription = subscriptions.first(where: { $0.uid == uid }) else {
                fatalError("invariant broken: an event for subscription \(uid ?? "nil")")
            }
            let matching = candidates.contains { row in
                row.collection == subscription.collection && row.item == line["key"]?.stringValue
                    && row.change.map(subscription.events.contains) == true
            }
            require(matching, "no row \(seq) of \(subscription.collection) wants this event")
            require(line["collection"]?.stringValue == subscription.collection, "the line's collection differs")
            require(line["id"]?.stringValue?.hasPrefix("act_\(seq)") == true, "the line's id does not name the row")
            if subscription.uid == "limited" {
                if case .object(let delta)? = line["delta"] {
                    let extra = delta.keys.filter { !limitedFields.contains($0) }
                    require(extra.isEmpty, "delta carries fields outside query.fields: \(extra)")
                }
            }
        }
    }
}
