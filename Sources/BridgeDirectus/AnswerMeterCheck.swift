import BridgeHTTP
import BridgeJSON

/// The body check of every REST request to Directus: a `JSONAnswerMeter` over the answer as it arrives, so that an
/// answer holding more values than any real one, nested deeper than the parser allows, or more items than the
/// `limit` asked for is refused after a few bytes instead of kept and parsed into a tree of 20 times its size
/// (docs/ARCHITECTURE.md "Answers too large").
struct AnswerMeterCheck: ResponseBodyCheck {
    /// The most JSON values one answer may hold: about 60 MB of tree at worst. A page over it is read again in
    /// smaller requests, one item over it alone is left out and reported, as one over the size limit is.
    static let maximumValues = 1_000_000

    private var meter: JSONAnswerMeter

    /// A check for the answer to a request with `query`: its `limit`, when positive, bounds the items of `data`.
    init(query: [(String, String)]) {
        let limit = query.last { $0.0 == "limit" }.flatMap { Int($0.1) }.flatMap { $0 > 0 ? $0 : nil }
        meter = JSONAnswerMeter(maximumValues: Self.maximumValues, maximumItems: limit)
    }

    mutating func inspect(_ bytes: UnsafeRawBufferPointer) -> String? {
        meter.consume(bytes)?.description
    }
}
