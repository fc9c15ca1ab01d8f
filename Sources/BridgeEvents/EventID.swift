import BridgeSystem

/// How event ids are made: unique per sink, the same in every run, and safe as an HTTP header value
/// (README.md "Event ids").
///
/// - Activity mode: `act_<activity id>` for the first subscription (in file order) on a collection,
///   `act_<activity id>_<uid>` for each other one on it.
/// - Snapshots: `snap_<collection>_<key>_<watermark activity id>`, with `_<uid>` added the same way.
/// - Live mode: `evt_<UUIDv7>` (made where the event is received).
///
/// Collection names, keys and uids go into ids as ``component(_:)``s: every byte but ASCII letters, digits, `-`,
/// `.` and `~` is percent-encoded, `_` included. So `_` only ever separates parts (`blog` + `posts_1` gives
/// `snap_blog_posts%5F1_9`, `blog_posts` + `1` gives `snap_blog%5Fposts_1_9`), no two different inputs give one id,
/// and every id is visible ASCII: nothing a Directus item holds (CR, LF, NUL, spaces) reaches a header.
public enum EventID {
    /// The id of the change recorded by activity row `activityID`, for a subscription whose ids carry
    /// `subscriptionSuffix` (nil for the first subscription on its collection).
    public static func activity(_ activityID: Int64, subscriptionSuffix: String?) -> String {
        var id = "act_" + String(activityID)
        if let subscriptionSuffix { id += "_" + subscriptionSuffix }
        return id
    }

    /// The id of the snapshot line of item `key` of `collection`, taken after activity id `watermark`.
    public static func snapshot(collection: String, key: String, watermark: Int64, subscriptionSuffix: String?)
        -> String
    {
        var id = "snap_" + component(collection) + "_" + component(key) + "_" + String(watermark)
        if let subscriptionSuffix { id += "_" + subscriptionSuffix }
        return id
    }

    /// `text` as one part of an id: its UTF-8 bytes, each one that is not an ASCII letter, digit, `-`, `.` or `~`
    /// written as `%XX` (upper-case hex). Distinct texts give distinct parts, none of which holds a `_`.
    public static func component(_ text: String) -> String {
        PercentEncoding.encode(text) { $0 != UInt8(ascii: "_") && PercentEncoding.isUnreserved($0) }
    }

    /// `id` as an HTTP header value (`webhook-id`, and what the signature covers): ids the bridge makes are visible
    /// ASCII and go as they are; in an id stored by an older version, every byte outside `!`…`~` (controls, space,
    /// non-ASCII) is percent-encoded, so no CR, LF or NUL can end or split a header.
    public static func headerValue(_ id: String) -> String {
        PercentEncoding.encode(id) { (0x21...0x7E).contains($0) }
    }
}
