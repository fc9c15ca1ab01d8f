internal import BridgeJSON
internal import Synchronization
internal import BridgeEvents
public import BridgeDirectus

/// `ActivitySource` over Directus's REST API (docs/directus-protocol.md §8.7, §8.8).
///
/// Activity pages ask for `revisions.delta` through the `revisions` alias of `directus_activity`, so one request
/// gives the rows and their deltas (Directus answers it with one more indexed query on `directus_revisions`). If
/// the user may not read revisions, the alias makes Directus refuse the read: the source then reads without it
/// and events carry no `delta`.
///
/// Every read is bounded by answer size (docs/ARCHITECTURE.md "Answers too large"): requests ask for as many rows
/// or keys as fit the limit by what earlier answers weighed, an answer over it is read again in halves, and one row
/// or item over it alone is read with the higher single limit — or left out, told through `report`.
public final class DirectusActivitySource: ActivitySource {
    package let api: DirectusAPI
    package let sizer: AnswerSizer
    private let readsDeltas: Mutex<Bool>
    private let onDeltasUnavailable: @Sendable (DirectusError) -> Void
    package let report: @Sendable (AnswerSizeEvent) -> Void

    /// Ids per activity request, and the most primary keys per item request.
    package static let keysPerRequest = 500
    /// Bytes of percent-encoded keys per item request: keeps URLs well under Node's 16 KiB header limit.
    package static let keyBytesPerRequest = 8000
    /// The kind of read activity rows are sized as.
    package static let activityKind = "activity"

    /// Creates the source; `onDeltasUnavailable` is told once when revisions turn out unreadable, `report` about
    /// answers over the limits.
    public init(
        api: DirectusAPI,
        limits: AnswerLimits = .standard,
        report: @escaping @Sendable (AnswerSizeEvent) -> Void = { _ in },
        onDeltasUnavailable: @escaping @Sendable (DirectusError) -> Void = { _ in }
    ) {
        self.api = api
        self.sizer = AnswerSizer(limits: limits)
        self.readsDeltas = Mutex(true)
        self.report = report
        self.onDeltasUnavailable = onDeltasUnavailable
    }

    private static let rowFields = "id,action,collection,item,timestamp,user"

    public func newestActivityID() async throws(DirectusError) -> Int64 {
        try await api.latestActivityID()
    }

    public func oldestActivityID() async throws(DirectusError) -> Int64? {
        try await api.oldestActivityID()
    }

    public func activity(after id: Int64, limit: Int) async throws(DirectusError) -> [ActivityRow] {
        try await rows(limit: limit) { after, count in
            [("filter[id][_gt]", String(after ?? id)), ("sort", "id"), ("limit", String(count))]
        }
    }

    public func activity(in ranges: [ClosedRange<Int64>], limit: Int) async throws(DirectusError) -> [ActivityRow] {
        try await rows(limit: limit) { after, count in
            let remaining = ranges.compactMap { range -> ClosedRange<Int64>? in
                guard let after else { return range }
                return range.upperBound <= after ? nil : max(range.lowerBound, after + 1)...range.upperBound
            }
            guard !remaining.isEmpty else { return nil }
            return [("filter", Self.filter(remaining)), ("sort", "id"), ("limit", String(count))]
        }
    }

    /// `{"_and":[{"id":{"_gte":first}},{"id":{"_lte":last}},{"_or":[{"id":{"_between":[low,high]}},…]}]}` for
    /// ascending `ranges`: the outer bounds let the database use the primary key's index for the whole span.
    package static func filter(_ ranges: [ClosedRange<Int64>]) -> String {
        let alternatives: [JSONValue] = ranges.map { range in
            ["id": ["_between": [JSONValue(range.lowerBound), JSONValue(range.upperBound)]]]
        }
        let filter: JSONValue = [
            "_and": [
                ["id": ["_gte": JSONValue(ranges.first?.lowerBound ?? 0)]],
                ["id": ["_lte": JSONValue(ranges.last?.upperBound ?? 0)]],
                ["_or": .array(alternatives)],
            ]
        ]
        return filter.serializedString()
    }

    /// Up to `limit` rows in id order, read in requests that fit the answer limit. `query(after, count)` gives the
    /// parameters of a request for `count` rows after the id `after` (nil: from the start), or nil when none are
    /// left to ask for.
    private func rows(limit: Int, query: (Int64?, Int) -> [(String, String)]?) async throws(DirectusError)
        -> [ActivityRow]
    {
        var rows: [ActivityRow] = []
        var after: Int64?
        while rows.count < limit {
            let maximum = api.rowLimit.capped(limit)
            let count = min(limit - rows.count, sizer.keysPerRequest(Self.activityKind, maximum: maximum))
            guard let parameters = query(after, count) else { break }
            let page: [ActivityRow]
            do {
                page = try await readActivity(parameters, maxResponseBytes: sizer.limits.normal, keys: count)
            } catch where error.kind == .tooLarge && count > 1 {
                sizer.tooLarge(Self.activityKind, keys: count)
                report(.split(operation: "GET /activity", keys: count))
                continue
            } catch where error.kind == .tooLarge {
                page = try await oversizedRow(parameters)
            }
            rows += page
            // A full answer is as many rows as were sent for: fewer when Directus's QUERY_LIMIT_MAX was learned from
            // its refusal of this very request, which `api` then sent again within it.
            guard page.count == api.rowLimit.capped(count), let last = page.last?.id else { break }
            after = last
        }
        return rows
    }

    /// A page of one row whose answer is over the normal limit: read with the single limit, else without its
    /// delta (the line then carries none; reported).
    private func oversizedRow(_ parameters: [(String, String)]) async throws(DirectusError) -> [ActivityRow] {
        let limits = sizer.limits
        do {
            return try await readActivity(parameters, maxResponseBytes: limits.single, keys: 1)
        } catch where error.kind == .tooLarge {
            let answer = try await api.get(
                "/activity", query: parameters + [("fields", Self.rowFields)], maxResponseBytes: limits.normal)
            let rows = ActivityRow.rows(of: answer)
            report(
                .omitted(
                    OmittedForSize(
                        part: "delta", collection: rows.first?.collection, keys: rows.map { String($0.id) },
                        limit: limits.single)))
            return rows
        }
    }

    private func readActivity(_ query: [(String, String)], maxResponseBytes: Int, keys: Int) async throws(DirectusError)
        -> [ActivityRow]
    {
        if readsDeltas.withLock({ $0 }) {
            do {
                let answer = try await api.get(
                    "/activity",
                    query: query + [("fields", Self.rowFields + ",revisions.delta")],
                    maxResponseBytes: maxResponseBytes
                )
                sizer.record(Self.activityKind, bytes: answer.bytes, keys: keys)
                return ActivityRow.rows(of: answer)
            } catch where error.isForbidden {
                // The activity itself may be forbidden too: the plain read below tells.
                _ = try await api.get("/activity", query: [("limit", "1"), ("fields", "id")])
                readsDeltas.withLock { $0 = false }
                onDeltasUnavailable(error)
            }
        }
        let answer = try await api.get(
            "/activity", query: query + [("fields", Self.rowFields)], maxResponseBytes: maxResponseBytes)
        sizer.record(Self.activityKind, bytes: answer.bytes, keys: keys)
        return ActivityRow.rows(of: answer)
    }

    /// Whether revisions are readable (the revision snapshot reads need them).
    package var revisionsReadable: Bool { readsDeltas.withLock { $0 } }
}
