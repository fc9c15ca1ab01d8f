import BridgeConfig
import BridgeJSON
import Testing

@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks

/// Nothing outside a subscription's `query.fields` leaves the bridge (docs/configuration.md "What `fields` lets out"):
/// `delta` and revision snapshots, which Directus does not shape by the query, are cut down by the reader.
@Suite struct FieldSafetyTests {
    @Test func deltaCarriesOnlyTheQueryFieldsAndAnUntouchedQueryGivesAnEmptyDelta() async throws {
        let directus = FakeDirectus()
        let harness = try ReaderHarness(
            directus: directus,
            subscriptions: [subscription(fields: ["id", "title"]), subscription("comments", fields: ["text"])]
        )
        harness.start()
        try await harness.waitUntilCaughtUp()
        directus.commit(
            1, "create", "articles", "40", item: article(40, title: "a", status: "draft"),
            delta: ["id": 40, "title": "a", "status": "draft", "body": "not for this subscription"])
        directus.commit(
            2, "update", "articles", "40", item: article(40, title: "a", status: "published"),
            delta: ["status": "published", "body": "still not"])
        directus.commit(3, "create", "comments", "7", item: ["id": 7, "text": "hi"], delta: ["id": 7, "text": "hi"])
        harness.wakeup.changeSeen(collection: "articles")
        let events = try await harness.collect(3)
        await harness.halt()

        try #require(events.map(\.id) == ["act_1", "act_2", "act_3"])
        #expect(events[0].json["delta"] == ["id": 40, "title": "a"])
        #expect(events[0].json["data"] == ["id": 40, "title": "a"])
        #expect(events[1].json["delta"] == .object(JSONObject()), "only other fields written: a line, delta {}")
        #expect(events[2].json["delta"] == ["text": "hi"], "the key the reader added to fields is not allowed")
        #expect(events[2].json["data"] == ["text": "hi"])
        for event in events {
            let text = String(decoding: event.body, as: UTF8.self)
            #expect(!text.contains("not for this subscription") && !text.contains("still not"))
        }
    }

    @Test func aGoneItemsRevisionSnapshotCarriesOnlyTheQueryFields() async throws {
        let directus = FakeDirectus()
        let harness = try ReaderHarness(directus: directus, subscriptions: [subscription(fields: ["title"])])
        harness.start()
        try await harness.waitUntilCaughtUp()
        directus.commit(
            1, "create", "articles", "41", item: ["id": 41, "title": "gone", "body": "hidden"],
            delta: ["title": "gone", "body": "hidden"])
        directus.commit(2, "delete", "articles", "41")
        harness.wakeup.changeSeen(collection: "articles")
        let events = try await harness.collect(2)
        await harness.halt()
        try #require(events.map(\.id) == ["act_1", "act_2"])
        #expect(events[0].json["data"] == ["title": "gone"])
        #expect(events[0].json["delta"] == ["title": "gone"])
    }

    @Test func everyFieldsFormAllowsItsTopLevelField() {
        let revision: JSONValue = [
            "id": 1, "title": "t", "author": "u-1", "item": "9", "date_created": "2026-01-01", "$meta": "m",
        ]
        func allowed(_ fields: [String]?) -> Set<String> {
            let query = ItemQuery(
                collection: "articles", primaryKey: "id",
                query: fields.map { .object([(key: "fields", value: .array($0.map { .string($0) }))]) })
            guard case .object(let object) = query.project(revision) else { return [] }
            return Set(object.keys)
        }
        let everything = Set(["id", "title", "author", "item", "date_created", "$meta"])
        #expect(allowed(nil) == everything, "no fields: Directus's default, every field")
        #expect(allowed(["*"]) == everything)
        #expect(allowed(["*.*"]) == everything, "a wildcard with relations is still every top-level field")
        #expect(allowed(["id", "*.author"]) == everything)
        #expect(allowed(["author.name"]) == ["author"], "a dotted field allows its top-level field")
        #expect(allowed(["author.*", "title"]) == ["author", "title"])
        #expect(allowed(["item:headings.title"]) == ["item"], "a many-to-any scope allows the field before it")
        #expect(allowed(["year(date_created)", "count(comments)"]) == [], "a function allows no raw field")
        #expect(allowed(["$meta"]) == ["$meta"])
        #expect(allowed(["Title", "title "]) == [], "names compare exactly")
    }

    @Test func namesCompareByTheirBytesNotByUnicodeEquivalence() {
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        let allowance = FieldAllowance(fields: [composed])
        #expect(allowance.allows(composed))
        #expect(!allowance.allows(decomposed))
        #expect(
            allowance.project(.object(JSONObject([(decomposed, 1), (composed, 2)]))) == .object(
                JSONObject([(composed, 2)])))
        #expect(allowance.project(.string("not an object")) == .object(JSONObject()))
        #expect(FieldAllowance(fields: nil).project(.string("as is")) == .string("as is"))
    }
}
