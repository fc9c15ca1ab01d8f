internal import BridgeSystem
internal import CNats

/// What a bucket's stream must not do to the bridge's state, checked when a bucket is bound: expire keys (`max_age`,
/// a bucket's TTL) or throw its oldest values away when full (discard old with a message or byte limit). Either
/// would let a cursor, the lease or a dead letter written long ago vanish, and a bridge would then skip or redeliver
/// changes. A bucket the bridge creates has neither.
enum KeyValueBucketLimits {
    /// What is wrong with the stream `stream` for the bridge's state, or nil when nothing is. Blocking.
    static func problem(stream: String, context: OpaquePointer, timeout: Duration) throws(NATSError) -> String? {
        let settings = try JetStreamProbe.settings(ofStream: stream, context: context, timeout: timeout)
        return problem(
            maxAge: settings.maxAge, discardOld: settings.discardsOld, maxMessages: settings.maxMessages,
            maxBytes: settings.maxBytes)
    }

    /// The rule on the stream's numbers (as the server sent them: anything ≤ 0 is "no limit").
    static func problem(maxAge: Int64, discardOld: Bool, maxMessages: Int64, maxBytes: Int64) -> String? {
        if maxAge > 0 {
            // Nanoseconds; whole seconds are enough to name it.
            return "expires its keys after \(maxAge / 1_000_000_000) s (TTL)"
        }
        if discardOld && (maxMessages > 0 || maxBytes > 0) {
            return "throws its oldest values away when full (discard old with max_msgs or max_bytes)"
        }
        return nil
    }
}
