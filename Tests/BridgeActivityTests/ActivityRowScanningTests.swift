import BridgeHTTP
import BridgeJSON
import BridgeSystem
import Testing

@testable import BridgeActivity
@testable import BridgeDirectus

/// Activity pages are read in place, as the socket's frames are: each row's members found in one pass over the
/// answer's bytes, no tree of the page; only a revision's `delta` becomes a tree (issue 23, item 3).
@Suite struct ActivityRowScanningTests {
    private func rows(_ text: String) throws -> [ActivityRow] {
        let answer = try DirectusClient.decode(
            HTTPResponse(status: 200, body: Array(text.utf8)), operation: "GET /activity")
        return ActivityRow.rows(of: answer)
    }

    @Test func everyMemberIsReadWhateverItsOrderAndTheMembersAround() throws {
        let page = """
            {"data":[
              {"id":7,"action":"update","collection":"articles","item":"42","timestamp":"2026-12-05T03:00:00.5Z",
               "user":"u-1","revisions":[{"delta":{"title":"new","n":[1,{"a":null}]}}]},
              {"revisions":[],"extra":{"id":99},"user":{"id":"u-2","email":"x"},"item":17,"collection":null,
               "action":"create","id":8},
              {"id":9,"action":"delete","collection":"art\\u0069cles","item":"k\\"ey","revisions":[{"delta":null}]},
              {"id":"10","action":"create"}, {"id":1.5}, {"id":11,"action":"update","revisions":[{"data":{}}]}, 5
            ],"meta":{"id":3}}
            """
        let read = try rows(page)
        #expect(read.map(\.id) == [7, 8, 9, 11])
        #expect(read[0].action == "update" && read[0].collection == "articles" && read[0].item == "42")
        #expect(read[0].timestamp == Timestamp(rfc3339: "2026-12-05T03:00:00.5Z") && read[0].user == "u-1")
        #expect(read[0].delta == (try JSONValue.parse(#"{"title":"new","n":[1,{"a":null}]}"#)))
        #expect(read[1] == ActivityRow(id: 8, action: "create", collection: nil, item: "17", user: "u-2"))
        #expect(read[2] == ActivityRow(id: 9, action: "delete", collection: "articles", item: "k\"ey"))
        #expect(read[3] == ActivityRow(id: 11, action: "update", collection: nil, item: nil))
    }

    @Test func anAnswerWithoutRowsGivesNone() throws {
        for text in [#"{"data":[]}"#, #"{"data":null}"#, #"{"data":{"id":1}}"#, #"{}"#, "[]", ""] {
            #expect(try rows(text).isEmpty, "\(text)")
        }
    }

    @Test func anAnswerThatIsNotJSONIsRefusedWithoutATree() {
        #expect(throws: DirectusError.self) { _ = try rows(#"{"data":[{"id":1}"#) }
    }
}
