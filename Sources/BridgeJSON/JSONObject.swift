/// A JSON object: members in the order they were written or added, looked up by key.
///
/// Keys are unique: parsing `{"a":1,"a":2}` keeps `"a":2` at the first position, as JavaScript's `JSON.parse`
/// does. Lookup is a linear scan, which beats hashing for the small objects Directus sends.
public struct JSONObject: Sendable, Equatable, ExpressibleByDictionaryLiteral, Sequence {
    /// One key/value pair.
    public struct Member: Sendable, Equatable {
        /// The key.
        public var key: String
        /// The value.
        public var value: JSONValue

        /// Creates a member.
        public init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// The members in order.
    public private(set) var members: [Member]

    /// An empty object.
    public init() {
        members = []
    }

    /// An object of `pairs` in order; a repeated key keeps its first position and its last value.
    public init(_ pairs: [(String, JSONValue)]) {
        members = []
        members.reserveCapacity(pairs.count)
        for (key, value) in pairs { self[key] = value }
    }

    /// An object from a dictionary literal, in the literal's order.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }

    /// Builds an object from parsed members, resolving repeated keys like ``init(_:)``.
    init(parsedMembers: [Member]) {
        // Repeated keys are rare; check cheaply first and only rebuild when there is one.
        if parsedMembers.count <= 1 || !Self.hasRepeatedKey(parsedMembers) {
            members = parsedMembers
        } else {
            members = []
            for member in parsedMembers { self[member.key] = member.value }
        }
    }

    private static func hasRepeatedKey(_ members: [Member]) -> Bool {
        if members.count <= 12 {
            for index in members.indices.dropFirst() {
                for earlier in 0..<index where members[earlier].key.utf8.elementsEqual(members[index].key.utf8) {
                    return true
                }
            }
            return false
        }
        var seen = Set<String>(minimumCapacity: members.count)
        for member in members where !seen.insert(member.key).inserted { return true }
        return false
    }

    /// The number of members.
    public var count: Int { members.count }

    /// Whether there are no members.
    public var isEmpty: Bool { members.isEmpty }

    /// The keys in order.
    public var keys: [String] { members.map(\.key) }

    /// The value for `key`; setting `nil` removes the member, setting a new key appends it.
    public subscript(key: String) -> JSONValue? {
        get {
            guard let index = index(of: key) else { return nil }
            return members[index].value
        }
        set {
            let existing = index(of: key)
            switch (existing, newValue) {
            case (let index?, let value?): members[index].value = value
            case (let index?, nil): members.remove(at: index)
            case (nil, let value?): members.append(Member(key: key, value: value))
            case (nil, nil): break
            }
        }
    }

    /// Keys compare by their UTF-8 bytes: JSON does not normalise Unicode, while `String ==` would.
    private func index(of key: String) -> Int? {
        members.firstIndex { $0.key.utf8.elementsEqual(key.utf8) }
    }

    /// Iterates the members in order.
    public func makeIterator() -> IndexingIterator<[Member]> {
        members.makeIterator()
    }

    /// Same keys with equal values, in any order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.members.count == rhs.members.count else { return false }
        if lhs.members == rhs.members { return true }
        for member in lhs.members {
            guard let other = rhs.index(of: member.key), rhs.members[other].value == member.value else { return false }
        }
        return true
    }
}
