/// How a `KeyValueStore` binds its bucket, and how long one request may take.
package struct KeyValueSettings: Sendable, Equatable {
    /// The bucket's name (`A-Z a-z 0-9 _ -`). Created when missing.
    package var bucket: String
    /// Revisions kept per key when the bucket is created (1...64). Default: 1 — only the latest value counts.
    package var history: Int
    /// Copies of the bucket a cluster keeps when the bucket is created (1...5). Default: 1.
    package var replicas: Int
    /// How long one request (a read, a write, binding the bucket) may take before it fails as retriable.
    /// Default: 2 s.
    package var requestTimeout: Duration
    /// Whether binding creates the bucket when it is missing (`check` only looks). Default: true.
    package var createIfMissing = true

    /// Creates settings.
    package init(bucket: String, history: Int = 1, replicas: Int = 1, requestTimeout: Duration = .seconds(2)) {
        self.bucket = bucket
        self.history = history
        self.replicas = replicas
        self.requestTimeout = requestTimeout
    }

    /// Whether `name` is a valid bucket name: 1–64 of `A-Z a-z 0-9 _ -`.
    package static func isValidBucket(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && name.utf8.allSatisfy(KeyValueKey.isPlain)
    }

    /// Throws a configuration error naming what is out of range.
    func validate() throws(NATSError) {
        guard Self.isValidBucket(bucket) else {
            throw NATSError(kind: .configuration, message: "invalid key-value bucket name \"\(bucket.prefix(80))\"")
        }
        guard (1...64).contains(history), (1...5).contains(replicas) else {
            throw NATSError(kind: .configuration, message: "key-value history must be 1...64 and replicas 1...5")
        }
    }
}

/// One key's latest entry in a bucket.
package struct KeyValueEntry: Sendable, Equatable {
    /// The value, or nil when the latest entry is a delete or purge marker.
    package var value: [UInt8]?
    /// The entry's revision (its stream sequence): what a compare-and-set write expects.
    package var revision: UInt64

    /// Creates an entry.
    package init(value: [UInt8]?, revision: UInt64) {
        self.value = value
        self.revision = revision
    }
}

/// Key-value keys: which keys are valid, and an encoding that makes any text one valid key token.
package enum KeyValueKey {
    /// Bytes a token may hold as they are (no escape needed): `A-Z a-z 0-9 _ -`.
    static func isPlain(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
            || byte == 0x5F || byte == 0x2D
    }

    /// Whether `key` is a valid key: 1–1024 of `A-Z a-z 0-9 _ - / = .`, not starting or ending with `.`, no empty
    /// token (`..`).
    package static func isValid(_ key: String) -> Bool {
        let bytes = Array(key.utf8)
        guard !bytes.isEmpty, bytes.count <= 1024 else { return false }
        let allowed = bytes.allSatisfy { isPlain($0) || $0 == 0x2F || $0 == 0x3D || $0 == 0x2E }
        return allowed && !key.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty)
    }

    /// `text` as one token: plain bytes stay, every other byte (`=` and `.` included) becomes `=` and two upper-case
    /// hex digits; the empty text is `=`. Different texts give different tokens.
    package static func token(_ text: String) -> String {
        if text.isEmpty { return "=" }
        var out = ""
        out.reserveCapacity(text.utf8.count)
        let hex = Array("0123456789ABCDEF")
        for byte in text.utf8 {
            if isPlain(byte) {
                out.append(Character(Unicode.Scalar(byte)))
            } else {
                out.append("=")
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            }
        }
        return out
    }

    /// The text `token` encodes (the inverse of `token(_:)`), or nil when it is not such a token.
    package static func decodeToken(_ token: String) -> String? {
        if token == "=" { return "" }
        var bytes: [UInt8] = []
        var iterator = Array(token.utf8).makeIterator()
        while let byte = iterator.next() {
            if isPlain(byte) {
                bytes.append(byte)
                continue
            }
            guard byte == 0x3D, let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue)
            else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        default: nil
        }
    }
}
