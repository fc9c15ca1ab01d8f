import Foundation

extension BridgeProcess {
    /// The event lines written before the line of a sentinel change, or nil when that line did not come within
    /// `timeout` (stretched by `TestEnvironment.patience`).
    ///
    /// For "nothing more arrives" checks: once the changes under test have arrived, the test makes one more change
    /// (the sentinel, `key` in `collection`, which the bridge subscribes to) and waits for its line. The bridge writes
    /// lines in change order (the activity log's in activity mode, the socket's in live mode), so a line it still had
    /// to write for an earlier change, a duplicate or a repeated snapshot, comes before the sentinel's: the lines
    /// before it are all there will be. A fixed sleep instead passed whenever the stray line came a little later.
    public func events(
        beforeSentinel key: String, in collection: String = "articles", timeout: TimeInterval = 10
    ) -> [[String: Any]]? {
        let isSentinel = { (event: [String: Any]) in
            event["key"] as? String == key && event["collection"] as? String == collection
        }
        guard waitUntil(timeout: timeout, { $0.events.contains(where: isSentinel) }) else { return nil }
        let all = events
        return all.firstIndex(where: isSentinel).map { Array(all[..<$0]) }
    }
}
