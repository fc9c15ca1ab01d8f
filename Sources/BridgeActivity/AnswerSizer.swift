internal import Synchronization
internal import BridgeEvents
internal import BridgeDirectus

/// How large the activity reader's REST answers may be.
public struct AnswerLimits: Sendable, Equatable {
    /// The largest answer of a read; reads are sized to fit half of it, and one over it is read again in smaller
    /// requests.
    public var normal: Int
    /// The largest answer for one item (or activity row, or revision) that does not fit `normal` alone.
    public var single: Int

    /// Creates limits.
    public init(normal: Int, single: Int) {
        self.normal = max(1, normal)
        self.single = max(self.normal, single)
    }

    /// 16 MiB per read (the REST client's own limit), 64 MiB for one item alone.
    public static let standard = AnswerLimits(normal: 16 << 20, single: 64 << 20)
}

/// Learns what one key of each kind of read weighs (an item of a query, an activity row with its delta, a revision
/// snapshot), so that reads ask for few enough keys that their answers fit the limit
/// (docs/ARCHITECTURE.md "Answers too large").
///
/// The estimate follows the heaviest recent answers and decays by a fifth per lighter one; an answer over the limit
/// sets it so that the next request asks for half the keys.
package final class AnswerSizer: Sendable {
    /// The limits.
    package let limits: AnswerLimits
    /// Bytes per key by kind of read.
    private let perKey = Mutex<[String: Double]>([:])

    /// Creates a sizer for `limits`.
    package init(limits: AnswerLimits) { self.limits = limits }

    /// Keys per request for reads of `kind`: as many as fit half the limit by the estimate, 1 to `maximum`.
    package func keysPerRequest(_ kind: String, maximum: Int) -> Int {
        guard let estimate = perKey.withLock({ $0[kind] }), estimate > 0 else { return max(1, maximum) }
        let fitting = Double(limits.normal / 2) / estimate
        return fitting >= Double(maximum) ? max(1, maximum) : max(1, Int(fitting))
    }

    /// Notes an answer of `bytes` for a request of `keys` keys.
    package func record(_ kind: String, bytes: Int, keys: Int) {
        let observed = Double(bytes) / Double(max(1, keys))
        perKey.withLock { $0[kind] = max(observed, ($0[kind] ?? 0) * 0.8) }
    }

    /// Notes that a request of `keys` keys got an answer over the limit.
    package func tooLarge(_ kind: String, keys: Int) {
        let floor = Double(limits.normal) / Double(max(1, keys))
        perKey.withLock { $0[kind] = max(floor, $0[kind] ?? 0) }
    }
}
