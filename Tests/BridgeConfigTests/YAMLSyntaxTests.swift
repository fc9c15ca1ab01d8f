import BridgeConfig
import BridgeCore
import BridgeEvents
import BridgeDirectus
import BridgeActivity
import BridgeSinks
import Testing

@Suite struct YAMLSyntaxTests {
    @Test func syntaxErrorIsReportedAtItsPosition() {
        let yaml = "directus:\n  url: http://x\n   bad: indent\n"
        #expect(issues(yaml) == ["bridge.yaml:3:7: invalid YAML: mapping values are not allowed in this context"])
    }

    @Test func unclosedFlowSequenceNamesWhereItStarted() {
        let yaml = "subscriptions: [a, b\nsinks: []\n"
        #expect(
            issues(yaml) == [
                "bridge.yaml:2:6: invalid YAML: did not find expected ',' or ']' (while parsing a flow sequence at "
                    + "line 1, column 16)"
            ]
        )
    }

    @Test func tabIndentationIsASyntaxError() {
        let result = issues("directus:\n\turl: http://x\n")
        #expect(result.count == 1)
        #expect(result.first?.hasPrefix("bridge.yaml:2:1: invalid YAML:") == true)
    }

    @Test func duplicateKeysAreRejectedAtTheSecondOccurrence() {
        let yaml = minimalYAML.replacingOnce(
            "  url: http://127.0.0.1:8055\n",
            with: "  url: http://a\n  url: http://b\n"
        )
        #expect(issues(yaml) == ["bridge.yaml:3:3: duplicate key \"url\" (first defined at line 2, column 3)"])
    }

    @Test func duplicateKeysInsideAQueryAreRejectedToo() {
        let yaml = minimalYAML.replacingOnce(
            "  - collection: articles\n",
            with: "  - collection: articles\n    query: { limit: 1, limit: 2 }\n"
        )
        #expect(issues(yaml) == ["bridge.yaml:7:24: duplicate key \"limit\" (first defined at line 7, column 14)"])
    }

    @Test func emptyFileIsAnIssueAtTheStart() {
        #expect(issues("") == ["bridge.yaml:1:1: the configuration file is empty"])
        #expect(issues("# only a comment\n\n") == ["bridge.yaml:1:1: the configuration file is empty"])
        #expect(issues("---\n") == ["bridge.yaml:1:1: the configuration file is empty"])
    }

    @Test func topLevelMustBeAMapping() {
        #expect(
            issues("- a\n- b\n") == [
                "bridge.yaml:1:1: the top level must be a mapping of keys (directus, subscriptions, sinks, …), got a list"
            ]
        )
    }

    @Test func secondDocumentIsRejected() {
        #expect(
            issues(minimalYAML + "---\nlog: {}\n") == [
                "bridge.yaml:9:1: a configuration file holds one YAML document; remove the second \"---\" document"
            ]
        )
    }

    @Test func invalidUTF8IsReportedWhereItStarts() {
        var bytes = Array("directus:\n  url: caf".utf8)
        bytes += [0xC3, 0x28]
        let result = ConfigLoader.parse(bytes: bytes, path: "bridge.yaml", environment: [:], sinkTypes: SinkCatalog.configTypes, files: InMemoryFiles())
        #expect(
            result.failure?.issues.map(\.description) == [
                "bridge.yaml:2:11: the configuration file is not valid UTF-8 text"
            ]
        )
    }

    @Test func byteOrderMarkAndCRLFLineEndingsAreAccepted() throws {
        let crlf = minimalYAML.replacing("\n", with: "\r\n")
        let bytes = [0xEF, 0xBB, 0xBF] + Array(crlf.utf8)
        let result = ConfigLoader.parse(bytes: bytes, path: "bridge.yaml", environment: [:], sinkTypes: SinkCatalog.configTypes, files: InMemoryFiles())
        #expect(try result.get().subscriptions.map(\.collection) == ["articles"])
    }

    @Test func positionsAfterCRLFAndNonASCIITextCountCharacters() {
        let yaml = "# café ☕\r\ndirectus:\r\n  urk: x\r\n"
        #expect(issues(yaml).contains("bridge.yaml:3:3: unknown key \"urk\" (did you mean \"url\"?)"))
    }

    @Test func controlCharactersAreASyntaxErrorWithAPosition() {
        let result = issues("log:\n  level: \u{7}\n")
        #expect(result.first?.hasPrefix("bridge.yaml:2:10: invalid YAML:") == true)
    }

    @Test func anchorsAndAliasesAreExpanded() throws {
        let yaml = """
            x-query: &published
              filter: { status: { _eq: published } }
            directus:
              url: http://127.0.0.1:8055
              auth: { token: t0ken }
            subscriptions:
              - collection: articles
                query: *published
              - collection: pages
                query: *published
            sinks:
              - type: ndjson

            """
        let config = try config(yaml)
        #expect(
            config.subscriptions.map { $0.query?.jsonText } == [
                #"{"filter":{"status":{"_eq":"published"}}}"#, #"{"filter":{"status":{"_eq":"published"}}}"#,
            ]
        )
    }

    @Test func problemsInsideAnAliasAreReportedOnceAtTheAnchoredText() {
        let yaml = """
            x-sink: &sink
              type: ndjson
              fsinc: always
            directus: { url: http://h, auth: { token: t0ken } }
            subscriptions: [{ collection: a }]
            sinks: [*sink, *sink]

            """
        #expect(issues(yaml).contains("bridge.yaml:3:3: unknown key \"fsinc\" (did you mean \"fsync\"?)"))
        #expect(issues(yaml).filter { $0.contains("fsinc") }.count == 1)
    }

    @Test func unknownAliasIsReported() {
        let yaml = minimalYAML + "log: *nowhere\n"
        #expect(
            issues(yaml) == [
                "bridge.yaml:9:6: unknown alias \"*nowhere\" (an alias must follow its \"&nowhere\" anchor)"
            ]
        )
    }

    @Test func aliasExpansionIsBounded() {
        var yaml = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for level in 1...6 {
            let previous = "*a\(level - 1)"
            yaml += "a\(level): &a\(level) [\(Array(repeating: previous, count: 10).joined(separator: ", "))]\n"
        }
        let result = issues(yaml)
        #expect(result.count == 1)
        #expect(result.first?.contains("aliases expand to more than 10000 nodes") == true)
    }

    @Test func mergeKeysAreRejectedWithAClearMessage() {
        let yaml = """
            x-base: &base { fsync: always }
            directus: { url: http://h, auth: { token: t0ken } }
            subscriptions: [{ collection: a }]
            sinks:
              - <<: *base
                type: ndjson

            """
        #expect(
            issues(yaml) == [
                "bridge.yaml:5:5: merge keys (\"<<\") are not supported; repeat the keys or alias the whole value"
            ]
        )
    }

    @Test func nonScalarKeysAreRejected() {
        let yaml = minimalYAML + "? [a, b]\n: c\n"
        #expect(issues(yaml) == ["bridge.yaml:9:3: a mapping key must be a plain value, not a list"])
    }

    @Test func onlyTheStringTagIsUnderstood() throws {
        #expect(
            issues(minimalYAML + "shutdown_timeout: !!int 5\n") == [
                "bridge.yaml:9:19: unsupported tag \"!!int\" (only \"!!str\" is understood)"
            ]
        )
        let yaml = minimalYAML.replacingOnce(
            "  - collection: articles\n",
            with: "  - collection: articles\n    query: { limit: !!str 5 }\n"
        )
        #expect(try config(yaml).subscriptions[0].query?.jsonText == #"{"limit":"5"}"#)
    }
}
