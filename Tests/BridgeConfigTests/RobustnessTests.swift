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
}
