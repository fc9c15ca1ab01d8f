internal import BridgeSystem
internal import CNats

/// What a bucket's stream must not do to the bridge's state, checked when a bucket is bound: expire keys (`max_age`,
/// a bucket's TTL) or throw its oldest values away when full (discard old with a message or byte limit). Either
/// would let a cursor, the lease or a dead letter written long ago vanish, and a bridge would then skip or redeliver
/// changes. A bucket the bridge creates has neither.
enum KeyValueBucketLimits {
    /// What is wrong with the stream `stream` for the bridge's state, or nil when nothing is. Blocking.
    static func problem(stream: String, context: OpaquePointer, timeout: Duration) throws(NATSError) -> String? {
        var options = jsOptions()
        jsOptions_Init(&options)
        options.Wait = max(1, timeout.roundedUpMilliseconds)
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(rawValue: 0)
        let status = stream.withCString { js_GetStreamInfo(&info, context, $0, &options, &code) }
        guard status == NATS_OK, let info else {
            throw NATSError.from(status: status, jetStreamCode: Int(code.rawValue), context: "stream \(stream)")
        }
        defer { jsStreamInfo_Destroy(info) }
        guard let config = info.pointee.Config?.pointee else { return nil }
        return problem(maxAge: config.MaxAge, discardOld: config.Discard == js_DiscardOld, maxMessages: config.MaxMsgs,
                       maxBytes: config.MaxBytes)
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
