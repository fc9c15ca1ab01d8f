package import BridgeNATS
internal import BridgeEvents
internal import BridgeJSON
internal import BridgeTLS

/// `state.backend: jetstream`: dead letters (of webhook and broker sinks) in the shared bucket (docs/ARCHITECTURE.md
/// "Shared state, lease and fencing"), one key per letter, `<name>.sink.<sink>.dead.<event id>` (`SharedStateKeys`);
/// the value is the letter as JSON, its body and the receiver's answer in base64 so that both come back byte for
/// byte.
///
/// `replay` marks letters (`"replay": true`) instead of moving them: the outbox that delivers them is the active
/// bridge's, maybe on another machine. That bridge takes marked letters into its outbox at its next poll (`dlq`
/// moves `<name>.dlq` to tell it to look) and deletes each key only once the event was delivered, so a failover in
/// between loses none. A marked letter is no longer a dead letter: not listed, replayed again or purged.
///
/// Every write is a compare-and-set on the revision just read, read again when another writer (a `dlq` beside the
/// bridge) got in between. Calls block: call them off Swift's cooperative pool.
package struct BucketDeadLetters: DeadLetterStore {
    /// A letter as the bucket holds it.
    package struct Stored: Sendable {
        package var key: String
        package var revision: UInt64
        package var letter: DeadLetter
        /// Marked by `dlq replay`: waiting for the active bridge to deliver it.
        package var replay: Bool
    }

    private let store: KeyValueStore
    private let keys: SharedStateKeys

    /// The letters of the bridges named by `keys` in `store`.
    package init(store: KeyValueStore, keys: SharedStateKeys) {
        self.store = store
        self.keys = keys
    }

    // MARK: - DeadLetterStore

    package func deadLetters(matching filter: DeadLetterFilter) throws -> [DeadLetter] {
        try entries(sink: nil).filter { !$0.replay && filter.matches($0.letter) }.map(\.letter)
    }

    package func replay(matching filter: DeadLetterFilter, now: Int64) throws -> [DeadLetter] {
        var replayed: [DeadLetter] = []
        for stored in try entries(sink: nil) where !stored.replay && filter.matches(stored.letter) {
            let marked = try store.change(stored.key) { entry in
                // Only the letter that was listed: one filed anew meanwhile is another failure, left for a new look.
                guard let entry, entry.revision == stored.revision, let value = entry.value else { return nil }
                return .put(Self.markedForReplay(value))
            }
            if marked { replayed.append(stored.letter) }
        }
        if !replayed.isEmpty { try signal() }
        return replayed
    }

    package func purge(matching filter: DeadLetterFilter) throws -> [DeadLetter] {
        var purged: [DeadLetter] = []
        for stored in try entries(sink: nil) where !stored.replay && filter.matches(stored.letter) {
            let deleted = try store.change(stored.key) { entry in
                guard let entry, entry.revision == stored.revision, entry.value != nil else { return nil }
                return .delete
            }
            if deleted { purged.append(stored.letter) }
        }
        if !purged.isEmpty { try signal() }
        return purged
    }

    /// The letters of `sinks` marked for replay: counted (`dryRun`) or deleted; returns how many. For sinks no
    /// longer configured (`dlq purge --sink`): no bridge takes their marked letters in, and `purge` skips marked
    /// letters, so they would stay in the bucket forever. A letter that changed since it was read (filed anew) is left.
    package func dropMarked(sinks: [String], dryRun: Bool) throws -> Int {
        var dropped = 0
        for sink in sinks {
            for stored in try entries(sink: sink) where stored.replay {
                if dryRun {
                    dropped += 1
                    continue
                }
                let deleted = try store.change(stored.key) { entry in
                    guard let entry, entry.revision == stored.revision, entry.value != nil else { return nil }
                    return .delete
                }
                if deleted { dropped += 1 }
            }
        }
        if dropped > 0 && !dryRun { try signal() }
        return dropped
    }

    // MARK: - The active bridge's side

    /// Every letter of this name (`sink` nil) or of `sink`, marked ones included, oldest first.
    package func entries(sink: String?) throws -> [Stored] {
        let prefix = sink.map { keys.deadLetterPrefix(sink: $0) }
        var found: [Stored] = []
        for key in try store.keys() where prefix.map(key.hasPrefix) ?? keys.isDeadLetter(key) {
            guard let entry = try store.entry(key), let value = entry.value,
                let (letter, replay) = Self.letter(from: value, revision: entry.revision)
            else { continue }  // deleted meanwhile, or damaged: not a letter anyone can deliver
            found.append(Stored(key: key, revision: entry.revision, letter: letter, replay: replay))
        }
        return found.sorted { ($0.letter.deadAt, $0.letter.eventID) < ($1.letter.deadAt, $1.letter.eventID) }
    }

    /// Files `letter` under its key, replacing whatever is there (a letter marked for replay included). Returns
    /// whether the key held no dead letter before (a letter marked for replay is none).
    @discardableResult
    package func file(_ letter: DeadLetter) throws -> Bool {
        var added = true
        let value = Self.value(of: letter)
        _ = try store.change(keys.deadLetter(sink: letter.sink, eventID: letter.eventID)) { entry in
            added = entry?.value.flatMap { Self.letter(from: $0, revision: 0) }.map(\.replay) ?? true
            return .put(value)
        }
        return added
    }

    /// Deletes a letter marked for replay once its event was delivered — unless it changed since `revision` (filed
    /// again, purged): then it is no longer the letter that was delivered.
    package func deleteDelivered(key: String, revision: UInt64) throws {
        _ = try store.change(key) { entry in entry?.revision == revision && entry?.value != nil ? .delete : nil }
    }

    /// The revision of `<name>.dlq` (0: never moved), which `dlq replay` and `dlq purge` move.
    package func changeMark() throws -> UInt64 { try store.entry(keys.deadLettersChanged)?.revision ?? 0 }

    private func signal() throws {
        _ = try store.change(keys.deadLettersChanged) { _ in .put(Array("{}".utf8)) }
    }

    // MARK: - Values

    static func value(of letter: DeadLetter, replay: Bool = false) -> [UInt8] {
        let object: JSONValue = [
            "sink": .string(letter.sink), "id": .string(letter.eventID), "collection": .string(letter.collection),
            "key": .string(letter.key), "body": .string(Crypto.base64Encode(letter.body)),
            "attempts": JSONValue(Int64(letter.attempts)), "created_at": JSONValue(letter.createdAt),
            "dead_at": JSONValue(letter.deadAt), "reason": .string(letter.reason),
            "last_status": letter.lastStatus.map { JSONValue(Int64($0)) } ?? .null,
            "response": .string(Crypto.base64Encode(letter.response)), "replay": .bool(replay),
            "event": letter.event.map { .string($0.rawValue) } ?? .null,
        ]
        return object.serialized()
    }

    /// The letter a value holds and whether it is marked for replay; nil for a value that is not one.
    package static func letter(from bytes: [UInt8], revision: UInt64) -> (DeadLetter, replay: Bool)? {
        guard let object = try? JSONValue.parse(bytes), let sink = object["sink"]?.stringValue,
            let id = object["id"]?.stringValue, let collection = object["collection"]?.stringValue,
            let key = object["key"]?.stringValue, let body = object["body"]?.stringValue.flatMap(Crypto.base64Decode),
            let attempts = object["attempts"]?.intValue, let deadAt = object["dead_at"]?.int64Value
        else { return nil }
        let letter = DeadLetter(
            seq: Int64(truncatingIfNeeded: revision), sink: sink, eventID: id, collection: collection, key: key,
            body: body, attempts: attempts, createdAt: object["created_at"]?.int64Value ?? deadAt, deadAt: deadAt,
            reason: object["reason"]?.stringValue ?? "", lastStatus: object["last_status"]?.intValue,
            response: object["response"]?.stringValue.flatMap(Crypto.base64Decode) ?? [],
            event: object["event"]?.stringValue.flatMap(ChangeEvent.init(rawValue:)))
        return (letter, object["replay"]?.boolValue ?? false)
    }

    private static func markedForReplay(_ value: [UInt8]) -> [UInt8] {
        guard case .object(var object)? = try? JSONValue.parse(value) else { return value }
        object["replay"] = .bool(true)
        return JSONValue.object(object).serialized()
    }
}
