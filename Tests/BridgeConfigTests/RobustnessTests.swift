import BridgeConfig
import Testing

/// Mutates a full configuration line by line: every variant must give a config or issues with real positions,
/// never a crash (the loader asserts that a config that failed to decode reported why).
@Suite struct RobustnessTests {
    static let files = InMemoryFiles(["/etc/ca.pem": "-----BEGIN CERTIFICATE-----"])
    static let lines = ExampleConfigTests.everyKey.split(separator: "\n", omittingEmptySubsequences: false).map(
        String.init
    )

    func check(_ text: String) {
        switch parse(text, files: Self.files) {
        case .success: break
        case .failure(let error):
            #expect(!error.issues.isEmpty)
            let lineCount = text.split(separator: "\n", omittingEmptySubsequences: false).count
            for issue in error.issues {
                #expect(issue.line >= 1 && issue.line <= lineCount && issue.column >= 1, "\(issue)")
            }
        }
    }

    @Test func everyLineRemoved() {
        for index in Self.lines.indices {
            var lines = Self.lines
            lines.remove(at: index)
            check(lines.joined(separator: "\n"))
        }
    }

    @Test(arguments: ["[]", "{}", "x", "0", "-1", "~", "\"\"", "${UNDEFINED}", "*nowhere", "!!int 1", "[[{}]]"])
    func everyValueReplaced(by replacement: String) {
        for (index, line) in Self.lines.enumerated() {
            guard let colon = line.firstRange(of: ": ") else { continue }
            var lines = Self.lines
            lines[index] = String(line[..<colon.upperBound]) + replacement
            check(lines.joined(separator: "\n"))
        }
    }

    /// A query nested 10,000 levels deep (a 20 KB file) overflowed the stack: `validate` and `run` died of SIGSEGV
    /// (exit 139), and a million levels took minutes first. Nesting is bounded where the tree is built, in flow and
    /// block style alike, and the message says where.
    @Test(arguments: [(YAMLTreeBuilder.maximumDepth + 1, true), (10_000, true), (1_000_000, true), (100, false)])
    func deepNestingIsAnIssueNotACrash(depth: Int, refused: Bool) {
        let flow = minimalYAML.replacingOnce(
            "  - collection: articles\n",
            with: "  - collection: articles\n    query:\n      filter: "
                + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "\n")
        let found = issues(flow)
        if refused {
            #expect(found.count == 1 && found.first?.contains("nested deeper than") == true, "\(found.prefix(1))")
            #expect(found.first?.hasPrefix("bridge.yaml:8:") == true, "\(found.prefix(1))")
        } else {
            #expect(found == ["<valid>"], "\(found)")
        }
    }

    @Test func deepBlockNestingIsAnIssueToo() {
        let levels = (0..<1_000).map { String(repeating: "  ", count: $0 + 3) + "k\($0):" }.joined(separator: "\n")
        let block = minimalYAML.replacingOnce(
            "  - collection: articles\n", with: "  - collection: articles\n    query:\n" + levels + " 1\n")
        #expect(issues(block).first?.contains("nested deeper than") == true)
    }

    /// Aliases cannot nest deeper than the text: an anchored list of 200 levels used 200 levels down is refused.
    @Test func aliasesDoNotNestDeeperEither() {
        let deep = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        let inner = String(repeating: "[", count: 200) + "*deep" + String(repeating: "]", count: 200)
        let yaml = "x-deep: &deep \(deep)\n" + minimalYAML.replacingOnce(
            "  - collection: articles\n", with: "  - collection: articles\n    query:\n      filter: \(inner)\n")
        #expect(issues(yaml).first?.contains("nested deeper than") == true, "\(issues(yaml).prefix(1))")
    }
}

/// A value pasted wrong (a whole document into `stream`, a 300-byte routing key) is echoed in its issue: the line
/// stays readable, with where it is and why it is refused, however long the value.
@Suite struct LongValueIssueTests {
    @Test(arguments: [
        ("type: redis", "url: redis://127.0.0.1", "stream", "(1 to 1024 bytes)"),
        ("type: amqp", "url: amqp://127.0.0.1", "routing_key", "(at most 255 bytes)"),
    ])
    func anIssueAboutALongValueKeepsItsPlaceAndItsReason(type: String, url: String, key: String, reason: String) {
        let value = String(repeating: "y", count: 20_000)
        let yaml = minimalYAML.replacingOnce(
            "  - type: ndjson\n", with: "  - \(type)\n    \(url)\n    \(key): \"\(value)\"\n")
        let found = issues(yaml)
        #expect(found.count == 1, "\(found.map { $0.prefix(200) })")
        let message = found.first ?? ""
        #expect(message.count <= ConfigIssue.maximumMessageLength + "bridge.yaml:9:9: ".count, "\(message.count)")
        #expect(message.contains("sinks[0].\(key)") && message.hasSuffix(reason), "\(message)")
        #expect(message.contains("characters left out"), "\(message)")
    }
}
