import BridgeConfig
import BridgeJSON
import Testing

@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks

@Suite struct ItemQueryTests {
    private func query(_ members: [(key: String, value: QueryValue)]?) -> ItemQuery {
        ItemQuery(collection: "articles", primaryKey: "uuid", query: members.map { .object($0) })
    }

    /// The item as the event's `data`, read back.
    private func shaped(_ plan: ItemQuery, _ item: JSONValue) -> JSONValue? {
        var bytes: [UInt8] = []
        plan.appendShaped(AnswerItem(item), to: &bytes)
        return try? JSONValue.parse(bytes)
    }

    private func parameters(_ list: [(String, String)]) -> [String: String] {
        Dictionary(list, uniquingKeysWith: { _, last in last })
    }

    @Test func thePrimaryKeyIsAddedToFieldsAndRemovedFromData() {
        let plan = query([(key: "fields", value: .array([.string("title"), .string("author.name")]))])
        #expect(plan.fields == ["title", "author.name", "uuid"])
        #expect(plan.primaryKeyAdded)
        #expect(shaped(plan, ["uuid": "k", "title": "t"]) == ["title": "t"])
        #expect(
            plan.project(["uuid": "k", "title": "t", "body": "b", "author": "u"]) == ["title": "t", "author": "u"]
        )
    }

    @Test func wildcardTextFieldsAndNoFieldsKeepTheKey() {
        #expect(query([(key: "fields", value: .string("*, title"))]).primaryKeyAdded == false)
        #expect(query([(key: "fields", value: .string("uuid,title"))]).fields == ["uuid", "title"])
        #expect(query(nil).fields == nil)
        #expect(shaped(query(nil), ["uuid": "k"]) == ["uuid": "k"])
    }

    @Test func theFilterIsCombinedWithTheKeys() throws {
        let plan = query([
            (
                key: "filter",
                value: .object([(key: "status", value: .object([(key: "_eq", value: .string("published"))]))])
            ),
            (key: "search", value: .string("hello")),
        ])
        let sent = parameters(plan.parameters(keys: ["a", "b"]))
        #expect(
            try JSONValue.parse(sent["filter"]!) == [
                "_and": [["status": ["_eq": "published"]], ["uuid": ["_in": ["a", "b"]]]]
            ]
        )
        #expect(sent["limit"] == "2")
        #expect(sent["search"] == "hello")
        let exists = parameters(plan.existenceParameters(keys: ["a"]))
        #expect(try JSONValue.parse(exists["filter"]!) == ["uuid": ["_in": ["a"]]])
        #expect(exists["fields"] == "uuid")
    }

    @Test func snapshotPagesAreKeysetPaginated() throws {
        let plan = query([(key: "filter", value: .string(#"{"status":{"_eq":"published"}}"#))])
        let first = parameters(plan.pageParameters(after: nil, limit: 500))
        #expect(try JSONValue.parse(first["filter"]!) == ["status": ["_eq": "published"]])
        #expect(first["sort"] == "uuid")
        #expect(first["meta"] == "filter_count")
        let next = parameters(plan.pageParameters(after: "k9", limit: 500))
        #expect(
            try JSONValue.parse(next["filter"]!) == [
                "_and": [["status": ["_eq": "published"]], ["uuid": ["_gt": "k9"]]]
            ]
        )
        #expect(next["meta"] == nil)
    }
}
