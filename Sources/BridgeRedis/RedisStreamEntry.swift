/// One entry to append to a Redis stream with `XADD`.
package struct RedisStreamEntry: Sendable, Equatable {
    /// One field of the entry.
    package struct Field: Sendable, Equatable {
        /// The field's name.
        package var name: String
        /// The field's value, as given.
        package var value: [UInt8]

        /// Creates a field.
        package init(_ name: String, _ value: [UInt8]) {
            self.name = name
            self.value = value
        }
    }

    /// The stream's key.
    package var stream: String
    /// The id the dedup window knows the entry by (the event id): within the window, an entry whose id was
    /// appended to the same stream before is not appended again.
    package var dedupID: String
    /// The entry's fields, in order.
    package var fields: [Field]

    /// Creates an entry.
    package init(stream: String, dedupID: String, fields: [Field]) {
        self.stream = stream
        self.dedupID = dedupID
        self.fields = fields
    }
}

/// What became of one entry.
package enum RedisStreamOutcome: Sendable {
    /// `XADD` answered with this entry id (`<milliseconds>-<sequence>`).
    case appended(String)
    /// The dedup window knew the id: the entry was appended before, as this entry id, and not again.
    case duplicate(String)
    /// The server refused the entry for good (the key holds another type, a value it cannot take): retrying
    /// cannot help.
    case rejected(RedisError)

    /// Whether the stream has the entry (appended now or before).
    package var isStored: Bool {
        switch self {
        case .appended, .duplicate: true
        case .rejected: false
        }
    }
}

/// How entries are appended.
package struct RedisStreamSettings: Sendable, Equatable {
    /// `XADD … MAXLEN ~ N`: the stream is trimmed to about this many entries; 0 never trims. Default: 0.
    package var maxLength: Int
    /// How long an appended entry's id is remembered (whole seconds); 0 turns deduplication off (a plain `XADD`).
    /// Default: 24 hours.
    package var dedupWindow: Duration
    /// The prefix of the dedup keys: `<prefix><stream>:<id>`. Default: `directus-bridge:dedup:`.
    package var dedupKeyPrefix: String

    /// Creates settings.
    package init(
        maxLength: Int = 0,
        dedupWindow: Duration = .seconds(86_400),
        dedupKeyPrefix: String = "directus-bridge:dedup:"
    ) {
        self.maxLength = maxLength
        self.dedupWindow = dedupWindow
        self.dedupKeyPrefix = dedupKeyPrefix
    }

    /// The window in whole seconds (at least 1 when on).
    var dedupSeconds: Int {
        let seconds = Int(dedupWindow.components.seconds)
        return dedupWindow > .zero ? max(1, seconds) : 0
    }
}
