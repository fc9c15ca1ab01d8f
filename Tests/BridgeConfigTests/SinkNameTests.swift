import BridgeConfig
import BridgeCore
import BridgeEvents
import BridgeDirectus
import BridgeActivity
import BridgeSinks
import Testing

/// A sink's `name` (docs/configuration.md, "Sink names"): 1–64 of `a-z 0-9 _ -`, unique, optional; the sink's id
/// wherever it has one, so moving a named entry changes nothing; an unnamed sink keeps its positional id and
/// `validate` warns about it.
@Suite struct SinkNameTests {
    /// `minimalYAML` with the sink list's body replaced by `lines` (indented two spaces).
    func yaml(sinks lines: [String]) -> String {
        minimalYAML.replacingOnce("  - type: ndjson\n", with: lines.map { "  \($0)\n" }.joined())
    }

    @Test func aNameIsDecodedAndIsTheSinksId() throws {
        let loaded = try config(yaml(sinks: ["- name: search-index_2", "  type: ndjson"]))
        #expect(loaded.sinks.first?.name == "search-index_2")
        #expect(SinkCatalog.identities(of: loaded.sinks) == ["search-index_2"])
        // Without a name an entry has no name, and its id is the positional one.
        let unnamed = try config(minimalYAML)
        #expect(unnamed.sinks.first?.name == nil)
        #expect(SinkCatalog.identities(of: unnamed.sinks).first?.hasPrefix("0-ndjson-") == true)
        // An empty value is no name, as for every optional text key.
        #expect(try config(yaml(sinks: ["- name: \"\"", "  type: ndjson"])).sinks.first?.name == nil)
    }

    @Test(arguments: ["Search", "search.index", "search index", "süd", "a/b", "a:b"])
    func onlyLowercaseLettersDigitsUnderscoreAndDashAreAllowed(name: String) {
        #expect(
            issues(yaml(sinks: ["- name: \"\(name)\"", "  type: ndjson"])) == [
                "bridge.yaml:8:11: sinks[0].name must be 1 to 64 of a-z, 0-9, _ and -; got \"\(name)\""
            ])
    }

    @Test func aNameHasAtMost64Characters() throws {
        let longest = String(repeating: "a", count: 64)
        #expect(try config(yaml(sinks: ["- name: \(longest)", "  type: ndjson"])).sinks.first?.name == longest)
        #expect(
            issues(yaml(sinks: ["- name: \(longest)b", "  type: ndjson"])) == [
                "bridge.yaml:8:11: sinks[0].name must be 1 to 64 of a-z, 0-9, _ and -; got \"\(longest)b\""
            ])
    }

    @Test func namesAreUnique() {
        let sinks = [
            "- name: out", "  type: ndjson", "- name: other", "  type: ndjson", "  path: b.ndjson", "- name: out",
            "  type: ndjson", "  path: c.ndjson",
        ]
        #expect(
            issues(yaml(sinks: sinks)) == ["bridge.yaml:13:11: sinks[2].name: \"out\" is already the name of sinks[0]"])
    }

    /// Reordering named entries keeps each one's id; the positional id each had without a name is what the start-up
    /// migration looks for.
    @Test func reorderingNamedSinksKeepsTheirIdsAndTheFormerIdsFollowThePosition() throws {
        let first = ["- name: file", "  type: ndjson", "  path: a.ndjson"]
        let second = ["- name: hook", "  type: webhook", "  url: http://127.0.0.1:9000/hook"]
        let before = try config(yaml(sinks: first + second)).sinks
        let after = try config(yaml(sinks: second + first)).sinks
        #expect(SinkCatalog.identities(of: before) == ["file", "hook"])
        #expect(SinkCatalog.identities(of: after) == ["hook", "file"])
        let unnamed = try config(
            yaml(sinks: ["- type: ndjson", "  path: a.ndjson", "- type: webhook", "  url: http://127.0.0.1:9000/hook"]))
        let positional = SinkCatalog.identities(of: unnamed.sinks)
        #expect(SinkCatalog.renames(of: before).formerIDs == ["file": positional[0], "hook": positional[1]])
        #expect(SinkCatalog.renames(of: before).configured == ["file", "hook"])
        #expect(positional[1].hasPrefix("1-127.0.0.1:9000-"), "\(positional)")
    }

    /// Where a name's saved progress is found (`SinkRenames`): its positional id, else the one stored id that
    /// differs from it in the position only (the entry moved as it was named); never a configured sink's id.
    @Test func aNameFindsItsPositionalIdAlsoAfterAMove() {
        let renames = SinkRenames(
            formerIDs: ["file": "0-ndjson-aa", "hook": "1-h:80-bb", "kafka": "2-kafka-cc"],
            configured: ["file", "hook", "kafka", "3-h:80-bb"])
        let stored: Set<String> = ["0-ndjson-aa", "5-h:80-bb", "3-h:80-bb", "7-kafka-cc", "8-kafka-cc", "old"]
        let found = renames.sources(for: ["file", "hook", "kafka"], among: stored)
        // file: its own positional id; hook: moved from 5 (3-… is a configured unnamed sink's); kafka: two
        // candidates, so neither (the sink starts from the sink furthest behind instead).
        #expect(found.map(\.name) == ["file", "hook"])
        #expect(found.map(\.former) == ["0-ndjson-aa", "5-h:80-bb"])
        // Only the names asked about; a stored id goes to one name at most.
        #expect(renames.sources(for: ["hook"], among: stored).map(\.former) == ["5-h:80-bb"])
        let twins = SinkRenames(formerIDs: ["a": "0-h:80-bb", "b": "1-h:80-bb"], configured: ["a", "b"])
        #expect(twins.sources(for: ["a", "b"], among: ["0-h:80-bb"]).map(\.name) == ["a"])
        #expect(SinkRenames().sources(for: ["file"], among: stored).isEmpty)
    }

    @Test func validateWarnsAboutEachUnnamedSinkOnly() throws {
        let warnings = try config(
            yaml(sinks: ["- name: file", "  type: ndjson", "  path: a.ndjson", "- type: ndjson", "  path: b.ndjson"])
        ).warnings
        #expect(warnings.map(\.field) == ["sinks[1]"])
        #expect(warnings.first?.detail.contains("without a name") == true)
        #expect(warnings.first?.remedy.contains("set name") == true)
    }

    @Test func printConfigShowsTheNameAndReadsBackTheSame() throws {
        let original = try config(yaml(sinks: ["- name: file", "  type: ndjson"]))
        #expect(original.description.contains("  - name: \"file\"\n    type: ndjson\n"), "\(original.description)")
        let reparsed = try config(original.description)
        #expect(reparsed.sinks == original.sinks)
    }
}
