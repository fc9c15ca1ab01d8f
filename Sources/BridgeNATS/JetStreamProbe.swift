internal import BridgeSystem
internal import CNats

/// Asks JetStream which streams take a subject (`JetStreamPublisher.streamNames`). Blocking; runs on the blocking
/// executor.
enum JetStreamProbe {
    /// Stream names the server may list before we stop believing it.
    static let maximumStreams: Int32 = 100_000

    /// The names of the streams whose subjects overlap `subject`, or an empty list when none does.
    static func streamNames(matching subject: String, handle: JetStreamHandle, timeout: Duration) throws(NATSError)
        -> [String]
    {
        var options = jsOptions()
        jsOptions_Init(&options)
        options.Wait = max(1, timeout.roundedUpMilliseconds)
        var list: UnsafeMutablePointer<jsStreamNamesList>?
        var code = jsErrCode(rawValue: 0)
        let status = subject.withCString { subject in
            options.Stream.Info.SubjectsFilter = subject
            return js_StreamNames(&list, handle.pointer, &options, &code)
        }
        if status == NATS_NOT_FOUND { return [] }  // libnats's answer for "no stream matched"
        guard status == NATS_OK, let list else {
            throw NATSError.from(status: status, jetStreamCode: Int(code.rawValue), context: "stream names")
        }
        defer { jsStreamNamesList_Destroy(list) }
        let count = list.pointee.Count
        guard count >= 0, count <= maximumStreams else {
            throw NATSError(kind: .retriable, message: "the server listed an impossible number of streams")
        }
        guard count > 0, let names = list.pointee.List else { return [] }
        return (0..<Int(count)).compactMap { names[$0].map { PeerText.string($0, maximumLength: 256) } }.sorted()
    }

    /// What a stream's configuration says about acknowledgements and limits, as the server sent it.
    struct StreamSettings: Equatable {
        var acknowledges = true
        var maxAge: Int64 = 0
        var discardsOld = false
        var maxMessages: Int64 = -1
        var maxBytes: Int64 = -1
    }

    /// The settings of stream `name`, asking with `context`.
    static func settings(ofStream name: String, context: OpaquePointer, timeout: Duration) throws(NATSError)
        -> StreamSettings
    {
        var options = jsOptions()
        jsOptions_Init(&options)
        options.Wait = max(1, timeout.roundedUpMilliseconds)
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(rawValue: 0)
        let status = name.withCString { js_GetStreamInfo(&info, context, $0, &options, &code) }
        guard status == NATS_OK, let info else {
            throw NATSError.from(status: status, jetStreamCode: Int(code.rawValue), context: "stream \(name)")
        }
        defer { jsStreamInfo_Destroy(info) }
        guard let config = info.pointee.Config?.pointee else { return StreamSettings() }
        return StreamSettings(
            acknowledges: !config.NoAck, maxAge: config.MaxAge,
            discardsOld: config.Discard == js_DiscardOld, maxMessages: config.MaxMsgs, maxBytes: config.MaxBytes)
    }
}
