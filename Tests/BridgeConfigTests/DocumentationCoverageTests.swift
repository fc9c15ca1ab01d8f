import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeConfig
import BridgeCore
import BridgeEvents
import BridgeDirectus
import BridgeActivity
import BridgeSinks

/// docs/configuration.md is the full reference: every key the decoder accepts has a row (or a dotted row such as
/// `reconnect.initial_delay`) in its tables.
@Suite struct DocumentationCoverageTests {
    @Test func everyAcceptedKeyIsDocumented() throws {
        let docs = try String(
            contentsOf: TestEnvironment.repositoryRoot.appendingPathComponent("docs/configuration.md"),
            encoding: .utf8
        )
        let sections: [[String]] = [
            ConfigKeys.root, ConfigKeys.directus, ConfigKeys.auth, ConfigKeys.tls, ConfigKeys.reconnect,
            ConfigKeys.subscription, ConfigKeys.delivery, ConfigKeys.sinkKeys(of: SinkCatalog.configTypes),
            ConfigKeys.http, ConfigKeys.log, ConfigKeys.state,
        ]
        for key in sections.joined() where key != "type" {
            let documented =
                docs.contains("| `\(key)` |") || docs.contains(".\(key)` |")
                || docs.contains("## `\(key)`") || docs.contains("| `\(key).")
            #expect(documented, "docs/configuration.md has no row for \"\(key)\"")
        }
    }

    static func text(_ relativePath: String) throws -> String {
        try String(contentsOf: TestEnvironment.repositoryRoot.appendingPathComponent(relativePath), encoding: .utf8)
    }

    /// GitHub's anchor of a heading: lower-cased, punctuation other than `-` and `_` dropped, spaces as `-`.
    static func anchor(_ heading: String) -> String {
        String(
            heading.lowercased().unicodeScalars.filter {
                CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_" || $0 == " "
            }
        ).replacingOccurrences(of: " ", with: "-")
    }

    /// Issue 25: the README's first screen says what the bridge is (every sink type) and what to run; a table of
    /// contents whose every entry leads to a heading; no build machine's path; every linked file exists.
    @Test func theReadmeTellsANewcomerWhatItIsAndWhatToRun() throws {
        let readme = try Self.text("README.md")
        let lines = readme.components(separatedBy: "\n")
        let firstHeading = try #require(lines.firstIndex { $0.hasPrefix("## ") })
        let intro = lines[..<firstHeading].joined(separator: " ")
        for word in ["NDJSON", "webhooks", "Kafka", "NATS JetStream"] { #expect(intro.contains(word), "\(word)") }
        #expect(lines[firstHeading].hasPrefix("## Quickstart"), "\(lines[firstHeading])")
        #expect(lines[firstHeading...].prefix(12).contains { $0.hasPrefix("scripts/demo.sh") })

        var inFence = false
        var anchors = Set<String>()
        for line in lines {
            if line.hasPrefix("```") { inFence.toggle() }
            if !inFence, line.hasPrefix("#") {
                anchors.insert(Self.anchor(String(line.drop { $0 == "#" }.dropFirst())))
            }
        }
        let contents = try #require(lines.firstIndex(of: "## Contents"))
        let entries = lines[(contents + 1)...].prefix { !$0.hasPrefix("## ") }.filter { $0.contains("](#") }
        #expect(entries.count >= 20, "\(entries)")
        for entry in entries {
            let target = String(entry[entry.range(of: "](#")!.upperBound...].dropLast())
            #expect(anchors.contains(target), "contents entry \(entry) leads nowhere")
        }
        for group in ["Install", "Configure", "Operate", "Reference"] { #expect(lines.contains("## \(group)")) }

        for machinePath in ["/work/", "/home/", "/root/", "/Users/"] {
            #expect(!readme.contains(machinePath), "README.md names a build machine's path \(machinePath)")
        }
        let linked = try NSRegularExpression(pattern: #"\]\(((?:docs/)?[A-Za-z_.-]+\.md)\)"#)
        for match in linked.matches(in: readme, range: NSRange(readme.startIndex..., in: readme)) {
            let file = (readme as NSString).substring(with: match.range(at: 1))
            #expect(
                FileManager.default.fileExists(atPath: TestEnvironment.repositoryRoot.appendingPathComponent(file).path),
                "README.md links \(file), which does not exist")
        }
    }

    /// The additions of issue 25 have their reference sections: log fields, the environment's variables.
    @Test func theLogFieldsAndTheEnvironmentVariablesAreDocumented() throws {
        let docs = try Self.text("docs/configuration.md")
        for text in [
            "### Log fields", "DIRECTUS_BRIDGE_JSON_LOG_FILE", "## Configuration from the environment",
            "DIRECTUS_BRIDGE__SINKS__0__TYPE", "| `cursor.position` | integer |",
        ] {
            #expect(docs.contains(text), "docs/configuration.md lacks \(text)")
        }
    }
}
