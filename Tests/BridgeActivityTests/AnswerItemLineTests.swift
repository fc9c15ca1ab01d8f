import BridgeConfig
import BridgeHTTP
import BridgeJSON
import BridgeSystem
import Testing

@testable import BridgeActivity
@testable import BridgeDirectus
@testable import BridgeEvents

/// REST items go into event lines from their answer's bytes (issue 23, item 3): each line must be byte for byte the
/// line the tree of the item gave before (parsed, the added primary key removed, serialised).
@Suite struct AnswerItemLineTests {
    private static let answer = #"""
        {"data":[
        {"id":1,"title":"café ☕ 😀","n":1e400,"z":-0,"nested":{"a":[1,{"b":null}],"t":true},"ctl":"a\u0001\n\""},
        {"id":"k-2","title":"caf\u00e9 \ud83d\ude00","n":-0.0E+2,"nested":{ "a" : [ 1 ] },"esc":"\/\u0008\u001F"},
        {"title":"key last","id":12345678901234567890},
        {"id":"k\u00e9y","id":"repeated","title":"repeated names: the last value at the first place"},
        {"id":1.5,"title":"no key text"},
        {"title":"no key at all"},
        {"id":4,"title":"t","nested":{"id":"inner"}}
        ],"meta":{"filter_count":7}}
        """#

    private func items() throws -> [AnswerItem] {
        let answer = try DirectusClient.decode(
            HTTPResponse(status: 200, body: Array(Self.answer.utf8)), operation: "GET /items/articles")
        return answer.items
    }

    private func query(_ fields: [String]?) -> ItemQuery {
        let members: [(key: String, value: QueryValue)]? = fields.map {
            [(key: "fields", value: .array($0.map(QueryValue.string)))]
        }
        return ItemQuery(collection: "articles", primaryKey: "id", query: members.map { .object($0) })
    }

    private func line(key: String, data: (inout [UInt8]) -> Void, tree: JSONValue?) -> (new: [UInt8], old: [UInt8]) {
        let fields = EventLineFields(
            identifier: .text("evt_1"), event: .snapshot, collection: "articles", key: key, origin: .snapshot, seq: nil,
            time: Timestamp(microsecondsSinceEpoch: 1_700_000_000_000_000),
            receivedAt: Timestamp(microsecondsSinceEpoch: 1_700_000_000_000_000), subscription: "s")
        var bytes: [UInt8] = []
        data(&bytes)
        var new: [UInt8] = []
        EventLineWriter.append(fields, data: bytes, deltaValue: nil, newline: true, to: &new)
        var old: [UInt8] = []
        EventLineWriter.append(fields, dataValue: tree, deltaValue: nil, newline: true, to: &old)
        return (new, old)
    }

    @Test func linesFromAnswerBytesAreTheLinesOfTheTree() throws {
        let items = try items()
        #expect(items.count == 7)
        #expect(items.map(\.isCompact) == [true, false, true, false, true, true, true])
        for fields in [nil, ["title", "nested"], ["id", "title"], ["*"]] {
            let query = query(fields)
            for item in items {
                // Before: the item's tree, its key from the tree, the added primary key removed from the tree.
                var tree = item.json
                let treeKey = tree["id"]?.keyString
                if query.primaryKeyAdded, case .object(var object) = tree {
                    object["id"] = nil
                    tree = .object(object)
                }
                #expect(query.key(of: item) == treeKey)
                let (new, old) = line(key: treeKey ?? "", data: { query.appendShaped(item, to: &$0) }, tree: tree)
                let text = { (bytes: [UInt8]) in String(decoding: bytes, as: UTF8.self) }
                #expect(new == old, "\(fields ?? []): \(text(new)) != \(text(old))")
            }
        }
    }

    @Test func membersAreReadLikeTheTree() throws {
        let items = try items()
        #expect(items[0]["n"] == .number(JSONNumber(text: "1e400")!))
        #expect(items[2]["id"]?.keyString == "12345678901234567890")
        #expect(items[3]["id"] == "repeated")
        #expect(items[6]["nested"] == ["id": "inner"])
        #expect(items[5]["id"] == nil)
    }

    /// A hostile answer pads one small item with megabytes nobody reads: its items are copied out, so keeping them
    /// (a snapshot page holds up to 500 items from as many answers) does not keep the answer.
    @Test func itemsOfAPaddedAnswerDoNotKeepItsBody() throws {
        let padding = Array(repeating: #""xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx""#, count: 10_000).joined(separator: ",")
        let text = #"{"data":[{"id":1},{"id":2}],"meta":{"padding":["# + padding + "]}}"
        let answer = try DirectusClient.decode(
            HTTPResponse(status: 200, body: Array(text.utf8)), operation: "GET /items/articles")
        let items = answer.items
        #expect(items.map { $0.keyString("id") } == ["1", "2"])
        #expect(items.allSatisfy { $0.bytes.count == #"{"id":1}{"id":2}"#.utf8.count })
        // An answer that is mostly its items shares its body with them.
        let page = try DirectusClient.decode(
            HTTPResponse(status: 200, body: Array(#"{"data":[{"id":1,"t":"abc"}]}"#.utf8)), operation: "GET")
        #expect(page.items.first?.bytes.count == page.body.count)
    }
}
