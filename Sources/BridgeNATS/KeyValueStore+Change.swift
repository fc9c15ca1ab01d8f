extension KeyValueStore {
    /// A write `change(_:_:)` makes.
    package enum Change: Sendable {
        /// Write this value.
        case put([UInt8])
        /// Place a delete marker.
        case delete
    }

    /// Writes what `make` makes of the key's latest entry (nil: leave the key as it is), a compare-and-set on that
    /// entry's revision, read again when another writer got in between (at most 5 times). Returns whether it wrote.
    ///
    /// For writers that share a key with others on equal terms (the commands beside the bridges); never for a fenced
    /// write, which must not read again over another bridge's write.
    package func change(_ key: String, _ make: (KeyValueEntry?) -> Change?) throws(NATSError) -> Bool {
        var attempt = 0
        while true {
            let entry = try entry(key)
            guard let change = make(entry) else { return false }
            let result: Result<UInt64, NATSError>
            do throws(NATSError) {
                let revision = entry?.revision ?? 0
                switch change {
                case .put(let value): result = .success(try update(key, value: value, expecting: revision))
                case .delete: result = .success(try delete(key, expecting: revision))
                }
            } catch {
                result = .failure(error)
            }
            switch result {
            case .success: return true
            case .failure(let error) where error.kind == .conflict && attempt < 4: attempt += 1
            case .failure(let error): throw error
            }
        }
    }
}
