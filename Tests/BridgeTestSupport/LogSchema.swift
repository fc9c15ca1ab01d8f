import Foundation

/// The JSON log line's schema as docs/configuration.md "Log fields" documents it, and a checker for lines: every field
/// documented, of its documented type, and no field name the dotted prefix of another (which Elasticsearch's dot
/// expansion would turn into an object where a value already is).
public struct LogSchema: Sendable {
    /// A documented field type.
    public enum FieldType: String, Sendable {
        case string, integer, number, boolean, seconds
        case secondsOrNull = "seconds or null"
    }

    /// Field name to type, as documented.
    public let fields: [String: FieldType]

    /// The keys every line has, outside `fields`.
    public static let envelope: Set<String> = ["time", "level", "logger", "message", "fields"]

    /// Creates a schema from a table's rows.
    public init(fields: [String: FieldType]) { self.fields = fields }

    /// The schema documented in docs/configuration.md "Log fields" (rows `` | `name` | type | meaning | ``).
    public static func documented() throws -> LogSchema {
        let url = TestEnvironment.repositoryRoot.appendingPathComponent("docs/configuration.md")
        let text = try String(contentsOf: url, encoding: .utf8)
        guard let start = text.range(of: "### Log fields\n") else { throw SchemaError("no \"Log fields\" section") }
        let section = text[start.upperBound...]
        var fields: [String: FieldType] = [:]
        for line in section.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("#") { break }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count >= 4, cells[1].hasPrefix("`"), cells[1].hasSuffix("`") else { continue }
            let name = String(cells[1].dropFirst().dropLast())
            guard let type = FieldType(rawValue: cells[2]) else {
                throw SchemaError("\(name): unknown type \(cells[2])")
            }
            guard fields.updateValue(type, forKey: name) == nil else { throw SchemaError("\(name) documented twice") }
        }
        return LogSchema(fields: fields)
    }

    /// Pairs of names where the first followed by `.` starts the second (`cursor` and `cursor.head`).
    public static func prefixCollisions(_ names: some Collection<String>) -> [(String, String)] {
        let sorted = names.sorted()
        var found: [(String, String)] = []
        for name in sorted {
            for other in sorted where other.hasPrefix(name + ".") { found.append((name, other)) }
        }
        return found
    }

    /// What is wrong with one log line (empty when nothing is).
    public func problems(ofLine line: String) -> [String] {
        guard let object = try? JSONDecoder().decode([String: JSONItem].self, from: Data(line.utf8)) else {
            return ["not a JSON object: \(line)"]
        }
        var problems: [String] = []
        let keys = Set(object.keys)
        if keys != Self.envelope { problems.append("keys \(keys.sorted()), expected \(Self.envelope.sorted())") }
        for key in ["time", "level", "logger", "message"] {
            if case .string = object[key] {} else { problems.append("\(key) is not a string") }
        }
        guard case .object(let fieldValues) = object["fields"] else { return problems + ["fields is not an object"] }
        for (name, value) in fieldValues.sorted(by: { $0.key < $1.key }) {
            guard let type = fields[name] else {
                problems.append("undocumented field \(name) = \(value)")
                continue
            }
            if !value.fits(type) { problems.append("field \(name) = \(value) is not \(type.rawValue)") }
        }
        for (short, long) in Self.prefixCollisions(fieldValues.keys) {
            problems.append("field \(short) is the prefix of field \(long)")
        }
        return problems.map { "\($0) — in \(line)" }
    }

    /// A JSON value with the distinctions the schema needs (an integer is not any number, a boolean not a number).
    public enum JSONItem: Decodable, Sendable, CustomStringConvertible {
        case null
        case boolean(Bool)
        case integer(Int64)
        case number(Double)
        case string(String)
        case array
        case object([String: JSONItem])

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let value = try? container.decode(Bool.self) {
                self = .boolean(value)
            } else if let value = try? container.decode(Int64.self) {
                self = .integer(value)
            } else if let value = try? container.decode(Double.self) {
                self = .number(value)
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else if let value = try? container.decode([String: JSONItem].self) {
                self = .object(value)
            } else {
                self = .array
            }
        }

        /// Whether the value is of `type`.
        func fits(_ type: FieldType) -> Bool {
            switch (type, self) {
            case (.string, .string), (.integer, .integer), (.boolean, .boolean): true
            case (.number, .integer), (.number, .number), (.seconds, .integer), (.seconds, .number): true
            case (.secondsOrNull, .integer), (.secondsOrNull, .number), (.secondsOrNull, .null): true
            default: false
            }
        }

        public var description: String {
            switch self {
            case .null: "null"
            case .boolean(let value): "\(value)"
            case .integer(let value): "\(value)"
            case .number(let value): "\(value)"
            case .string(let value): "\"\(value)\""
            case .array: "[…]"
            case .object: "{…}"
            }
        }
    }

    /// The docs table could not be read.
    public struct SchemaError: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }
}
