/// What sinks may write to the shared state during one term of being active (docs/ARCHITECTURE.md "Shared state,
/// lease and fencing"): the keys the term's takeover moved, written under the same fencing as the cursors.
///
/// Calls block (requests to the state servers): call them off Swift's cooperative pool.
package protocol SharedTermWriter: Sendable {
    /// The value `key` held when this term took the shared state over (nil: none, or not a key the takeover reads).
    func takenOver(_ key: String) -> [UInt8]?
    /// Writes `value` under `key`, a compare-and-set on the revision this term last wrote or took over. Throws
    /// `FencedError` (and the bridge steps down) when another bridge wrote the key since: never retried.
    func writeFenced(_ key: String, value: [UInt8]) throws
}
