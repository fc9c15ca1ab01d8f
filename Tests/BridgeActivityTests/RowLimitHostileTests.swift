import BridgeJSON
import Testing

@testable import BridgeDirectus
@testable import BridgeActivity

/// Directus's `QUERY_LIMIT_MAX` as a hostile or broken server gives it (docs/RELIABILITY.md, "Wire numbers and traps:
/// audit"): in `/server/info` and in the refusal of a `limit` over it. A number taken from the peer only ever lowers
/// the `limit`s the bridge sends (`RowLimit.capped` is at most what was asked), so it sizes no buffer; a limit of 1
/// reads every row one at a time, slowly and completely.
@Suite struct RowLimitHostileTests {
    static let query = ItemQuery(collection: "articles", primaryKey: "id", query: nil)

    /// Only a positive integer that fits `Int` is a limit; anything else leaves none known (or the one known before).
    @Test(arguments: [
        ("9223372036854775807", Int.max), ("1", 1), ("100", 100),
        ("9223372036854775808", nil), ("99999999999999999999999", nil), ("1e300", nil), ("1e2", nil), ("2.5", nil),
        ("-1", nil), ("-5", nil), ("0", nil), ("-0", nil), (#""100""#, nil), (#""Infinity""#, nil), ("null", nil),
        ("true", nil), ("[100]", nil), (#"{"max":100}"#, nil),
    ] as [(String, Int?)])
    func aServerInfoMaximumIsTakenOnlyWhenItIsAPositiveInteger(_ text: String, expected: Int?) throws {
        let info = try JSONValue.parse(#"{"queryLimit":{"default":100,"max":"# + text + "}}")
        let limit = RowLimit()
        #expect(limit.learn(info: info) == expected)
        #expect(limit.maximum == expected)
        #expect(limit.capped(500) == min(500, expected ?? 500), "never above what was asked")
        #expect(limit.capped(Int.max) == (expected ?? Int.max))
        #expect(limit.apply(to: [("limit", "500")]).first?.1 == String(min(500, expected ?? 500)))
        // A later answer that names none leaves a limit known before as it is.
        let known = RowLimit()
        known.learn(info: ["queryLimit": ["max": 7]])
        known.learn(info: info)
        #expect(known.maximum == (expected ?? 7))
    }

    /// `/server/info` answers without the member, or with another shape.
    @Test func aServerInfoWithoutAMaximumLeavesNone() throws {
        let limit = RowLimit()
        for info: JSONValue? in [nil, .null, [:], ["queryLimit": .null], ["queryLimit": 100], ["queryLimit": [1, 2]]] {
            #expect(limit.learn(info: info) == nil)
        }
        #expect(limit.maximum == nil && limit.capped(500) == 500 && limit.capped(0) == 1 && limit.capped(-5) == 1)
    }

    /// The number a refusal names: digits only (Joi writes the schema's maximum); `1e+300` reads as 1 (the digits
    /// before the exponent) — pages of one row, slow but complete; a sign, a huge number, other digits: none.
    @Test(arguments: [
        (#""limit" must be less than or equal to 250."#, 250), (#""limit" must be less than or equal to 1"#, 1),
        (#""limit" must be less than or equal to 1e+300"#, 1), (#""limit" must be less than or equal to 2.5"#, 2),
        (#""limit" must be less than or equal to 0"#, nil), (#""limit" must be less than or equal to -1"#, nil),
        (#""limit" must be less than or equal to 9223372036854775808"#, nil),
        (#""limit" must be less than or equal to Infinity"#, nil), (#""limit" must be less than or equal to ١٠٠"#, nil),
        (#""limit" must be less than or equal to "#, nil), (#""limit" must be less than or equal to"#, nil),
        ("", nil), (String(repeating: "9", count: 100_000), nil),
    ] as [(String, Int?)])
    func aRefusalNamesALimitOnlyInDigits(_ message: String, expected: Int?) {
        let limit = RowLimit()
        let refusal = DirectusError(kind: .rejected, status: 400, code: "INVALID_QUERY", message: message, operation: "GET")
        #expect(limit.learn(refusal: refusal) == expected)
        #expect(limit.maximum == expected)
    }

    /// `QUERY_LIMIT_MAX=1`: every read goes on one row at a time until it has all (no floor: a bridge that asked for
    /// more than Directus allows would be refused on every read).
    @Test func aLimitOfOneReadsEveryRowOneAtATime() async throws {
        let directus = SizedDirectus(defaultLimit: 16 << 20, queryLimitMax: 1)
        for key in 1...7 { directus.create(Int64(key), key: key, size: 10) }
        let source = DirectusActivitySource(api: directus.api)
        #expect(try await source.activity(after: 0, limit: 500).map(\.id) == (1...7).map { Int64($0) })
        #expect(source.api.rowLimit.maximum == 1)
        #expect(try await source.itemsPage(Self.query, after: nil, limit: 500).entries.count == 7)
        #expect(try await source.items(Self.query, keys: (1...7).map(String.init)).items.count == 7)
        #expect(try await source.existingKeys(Self.query, keys: (1...8).map(String.init)).count == 7)
        let requests = directus.state.withLock { $0.requests }
        #expect(requests["refused"] == 1, "learned once: \(requests)")
        #expect((requests["/items/articles"] ?? 0) >= 7 * 3, "one row a request: \(requests)")
    }

    /// A refusal that names no number below what was asked (it holds the bridge to 50 but says 1000, or names none):
    /// the read fails after one more request at most — no loop — and is retried by its reader with backoff.
    @Test(arguments: [
        #"Invalid query. "limit" must be less than or equal to 1000."#, #"Invalid query. "limit" is not allowed."#,
        #"Invalid query. "limit" must be less than or equal to 0."#,
    ])
    func aRefusalThatNamesNoUsableLimitFailsTheReadWithoutLooping(_ message: String) async throws {
        let directus = SizedDirectus(defaultLimit: 16 << 20, queryLimitMax: 50, refusalMessage: message)
        for key in 1...60 { directus.create(Int64(key), key: key, size: 10) }
        let source = DirectusActivitySource(api: directus.api)
        await #expect(throws: DirectusError.self) { try await source.itemsPage(Self.query, after: nil, limit: 500) }
        #expect((directus.state.withLock { $0.requests["refused"] } ?? 0) <= 2)
    }
}
