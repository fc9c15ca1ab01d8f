internal import BridgeSystem
internal import CNats

/// A JetStream key-value bucket over one `NATSConnection`, owning its `jsCtx` and `kvStore`.
///
/// Every write is a compare-and-set on the key's revision (`create` expects none, `update` and `delete` the one
/// last read): of two writers expecting the same revision exactly one succeeds, the other gets a `conflict` error.
/// Reads see delete markers (`KeyValueEntry.value` nil) with their revision, so a deleted key is rewritten by the
/// same compare-and-set. Binding creates the bucket when it is missing (file storage).
///
/// The calls block (a request to the server, at most `requestTimeout`): run them on a thread of their own or the
/// blocking executor, never on Swift's cooperative pool. libnats's JetStream and key-value calls are thread-safe
/// (each request has its own inbox and reply), so one store may be used from several threads; only
/// `kvStore_Destroy`/`jsCtx_Destroy` are not, and only `deinit` calls them, last.
package final class KeyValueStore: @unchecked Sendable {
    // @unchecked: see above — libnats serializes its own state; the pointers never change after `open`.
    private let connection: NATSConnection
    private let context: OpaquePointer
    private let store: OpaquePointer
    /// The bucket's settings.
    package let settings: KeyValueSettings
    private let streamName: String
    private let subjectPrefix: String

    private init(connection: NATSConnection, context: OpaquePointer, store: OpaquePointer, settings: KeyValueSettings) {
        self.connection = connection
        self.context = context
        self.store = store
        self.settings = settings
        self.streamName = "KV_" + settings.bucket
        self.subjectPrefix = "$KV." + settings.bucket + "."
    }

    deinit {
        kvStore_Destroy(store)
        jsCtx_Destroy(context)
    }

    /// Binds the bucket of `settings` on `connection`, creating it when missing unless `createIfMissing` is off (then
    /// a missing bucket is an error whose status is `NATS_NOT_FOUND`, see `NATSError.isNotFound`), on the blocking
    /// executor. Throws a retriable error while the servers cannot answer (no stream leader yet, a lost connection).
    package static func open(connection: NATSConnection, settings: KeyValueSettings) async throws -> KeyValueStore {
        try settings.validate()
        let handle = connection.handle
        let bound = try await BlockingExecutor.shared.perform { () throws(NATSError) -> BoundBucket in
            try bind(handle, settings: settings)
        }
        return KeyValueStore(connection: connection, context: bound.context, store: bound.store, settings: settings)
    }

    /// A bound bucket's pointers, handed from the blocking executor to the new store (which then owns them).
    private struct BoundBucket: @unchecked Sendable {
        let context: OpaquePointer
        let store: OpaquePointer
    }

    private static func bind(_ connection: NATSConnectionHandle, settings: KeyValueSettings) throws(NATSError)
        -> BoundBucket
    {
        var options = jsOptions()
        jsOptions_Init(&options)
        options.Wait = max(1, settings.requestTimeout.roundedUpMilliseconds)
        var rawContext: OpaquePointer?
        let status = natsConnection_JetStream(&rawContext, connection.pointer, &options)
        guard status == NATS_OK, let context = rawContext else {
            throw NATSError.from(status: status, context: "JetStream context")
        }
        var rawStore: OpaquePointer?
        var bound = js_KeyValue(&rawStore, context, settings.bucket)
        if bound == NATS_NOT_FOUND && settings.createIfMissing {
            var config = kvConfig()
            kvConfig_Init(&config)
            config.History = UInt8(settings.history)
            config.StorageType = js_FileStorage
            config.Replicas = Int32(settings.replicas)
            bound = settings.bucket.withCString { bucket in
                config.Bucket = bucket
                return js_CreateKeyValue(&rawStore, context, &config)
            }
            // Another bridge may have created it at the same moment (with the same settings): bind to theirs.
            if bound != NATS_OK { bound = js_KeyValue(&rawStore, context, settings.bucket) }
        }
        guard bound == NATS_OK, let store = rawStore else {
            let error = NATSError.from(status: bound, context: "key-value bucket \(settings.bucket)")
            jsCtx_Destroy(context)
            throw error
        }
        do throws(NATSError) {
            let stream = "KV_" + settings.bucket
            if let problem = try KeyValueBucketLimits.problem(
                stream: stream, context: context, timeout: settings.requestTimeout)
            {
                throw NATSError(
                    kind: .configuration,
                    message: "key-value bucket \(settings.bucket) \(problem): cursors, the lease and dead letters "
                        + "would vanish; give the bridge a bucket without TTL or limits (it creates one when missing)")
            }
        } catch {
            kvStore_Destroy(store)
            jsCtx_Destroy(context)
            throw error
        }
        return BoundBucket(context: context, store: store)
    }

    /// The connection's health.
    package var connectionStatus: NATSConnectionStatus { connection.status }

    // MARK: - Reading

    /// The latest entry of `key` (a delete marker included), or nil when the key was never written.
    package func entry(_ key: String) throws(NATSError) -> KeyValueEntry? {
        try Self.validate(key)
        var options = requestOptions()
        var message: OpaquePointer?
        var code = jsErrCode(rawValue: 0)
        let status = js_GetLastMsg(&message, context, streamName, subjectPrefix + key, &options, &code)
        if status == NATS_NOT_FOUND { return nil }
        guard status == NATS_OK, let message else {
            throw NATSError.from(status: status, jetStreamCode: Int(code.rawValue), context: "read \(key)")
        }
        defer { natsMsg_Destroy(message) }
        let revision = natsMsg_GetSequence(message)
        var operation: UnsafePointer<CChar>?
        let marked = natsMsgHeader_Get(message, "KV-Operation", &operation) == NATS_OK
        let operationName = marked ? PeerText.string(operation, maximumLength: 16) : ""
        if operationName == "DEL" || operationName == "PURGE" { return KeyValueEntry(value: nil, revision: revision) }
        let length = Int(natsMsg_GetDataLength(message))
        guard length >= 0, length <= 64 << 20 else {
            throw NATSError(kind: .retriable, message: "read \(key): the server sent an impossible value length")
        }
        var value = [UInt8](repeating: 0, count: length)
        if length > 0, let data = natsMsg_GetData(message) {
            value.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(start: data, count: length)) }
        }
        return KeyValueEntry(value: value, revision: revision)
    }

    /// Every key whose latest entry is a value (not a delete marker); empty for an empty bucket.
    package func keys() throws(NATSError) -> [String] {
        var options = kvWatchOptions()
        kvWatchOptions_Init(&options)
        options.Timeout = max(1, settings.requestTimeout.roundedUpMilliseconds)
        var list = kvKeysList()
        let status = kvStore_Keys(&list, store, &options)
        if status == NATS_NOT_FOUND { return [] }  // libnats's answer for "no keys"
        guard status == NATS_OK else { throw NATSError.from(status: status, context: "list keys") }
        defer { kvKeysList_Destroy(&list) }
        guard list.Count >= 0, list.Count <= 10_000_000 else {
            throw NATSError(kind: .retriable, message: "list keys: the server listed an impossible number of keys")
        }
        guard list.Count > 0, let keys = list.Keys else { return [] }
        return (0..<Int(list.Count)).compactMap { keys[$0].map { PeerText.string($0, maximumLength: 1024) } }
    }

    // MARK: - Writing (compare-and-set)

    /// Writes `value` under `key` only if the key has no value: never written, or its latest entry is a delete
    /// marker at `revision` (pass 0 for never written). Returns the new revision; `conflict` when another writer
    /// wrote first.
    @discardableResult
    package func create(_ key: String, value: [UInt8], overMarker revision: UInt64 = 0) throws(NATSError) -> UInt64 {
        try publish(key, value: value, expecting: revision, operation: nil)
    }

    /// Writes `value` under `key` only if the key's latest revision is still `revision` (0: the key was never
    /// written). Returns the new revision; `conflict` when the key has moved on. `timeout` (default: the
    /// settings' request timeout) bounds the wait for the server's answer.
    @discardableResult
    package func update(_ key: String, value: [UInt8], expecting revision: UInt64, timeout: Duration? = nil)
        throws(NATSError) -> UInt64
    {
        try publish(key, value: value, expecting: revision, operation: nil, timeout: timeout)
    }

    /// Places a delete marker on `key` only if its latest revision is still `revision`; returns the marker's
    /// revision.
    @discardableResult
    package func delete(_ key: String, expecting revision: UInt64) throws(NATSError) -> UInt64 {
        try publish(key, value: [], expecting: revision, operation: "DEL")
    }

    /// Removes every revision of `key` (leaving a purge marker), whoever wrote it last.
    package func purge(_ key: String) throws(NATSError) {
        try Self.validate(key)
        var options = kvPurgeOptions()
        kvPurgeOptions_Init(&options)
        options.Timeout = max(1, settings.requestTimeout.roundedUpMilliseconds)
        let status = kvStore_Purge(store, key, &options)
        guard status == NATS_OK else { throw NATSError.from(status: status, context: "purge \(key)") }
    }

    private func publish(
        _ key: String, value: [UInt8], expecting revision: UInt64, operation: String?, timeout: Duration? = nil
    ) throws(NATSError) -> UInt64 {
        try Self.validate(key)
        guard value.count <= 1 << 20 else {
            throw NATSError(kind: .rejected, message: "write \(key): a value of \(value.count) bytes is too large")
        }
        var message: OpaquePointer?
        let created = value.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) {
                natsMsg_Create(&message, subjectPrefix + key, nil, $0.baseAddress, Int32($0.count))
            }
        }
        guard created == NATS_OK, let message else { throw NATSError.from(status: created, context: "write \(key)") }
        defer { natsMsg_Destroy(message) }
        if let operation {
            let status = natsMsgHeader_Set(message, "KV-Operation", operation)
            guard status == NATS_OK else { throw NATSError.from(status: status, context: "write \(key)") }
        }
        var options = jsPubOptions()
        jsPubOptions_Init(&options)
        options.MaxWait = max(1, (timeout ?? settings.requestTimeout).roundedUpMilliseconds)
        // The compare-and-set: the server stores the message only if the key's last sequence is `revision`
        // (ExpectNoMessage: the key has no message at all).
        if revision == 0 { options.ExpectNoMessage = true } else { options.ExpectLastSubjectSeq = revision }
        var ack: UnsafeMutablePointer<jsPubAck>?
        var code = jsErrCode(rawValue: 0)
        let status = js_PublishMsg(&ack, context, message, &options, &code)
        guard status == NATS_OK, let ack else {
            throw NATSError.from(status: status, jetStreamCode: Int(code.rawValue), context: "write \(key)")
        }
        defer { jsPubAck_Destroy(ack) }
        return ack.pointee.Sequence
    }

    private func requestOptions() -> jsOptions {
        var options = jsOptions()
        jsOptions_Init(&options)
        options.Wait = max(1, settings.requestTimeout.roundedUpMilliseconds)
        return options
    }

    private static func validate(_ key: String) throws(NATSError) {
        guard KeyValueKey.isValid(key) else {
            throw NATSError(kind: .rejected, message: "invalid key-value key \"\(key.prefix(80))\"")
        }
    }
}
