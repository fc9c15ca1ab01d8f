import Foundation
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

@testable import BridgeApp

/// The environment as the bridge reads it without Foundation: what `setenv` put there, values with `=` whole.
@Suite struct ProcessEnvironmentTests {
    @Test func readsWhatSetenvPutThereWithEqualsSignsInTheValue() {
        let name = "DIRECTUS_BRIDGE_TEST_ENV_\(getpid())"
        setenv(name, "a=b==c", 1)
        defer { unsetenv(name) }
        let environment = ProcessEnvironment.current()
        #expect(environment[name] == "a=b==c")
        #expect(environment["PATH"] == getenv("PATH").map { String(cString: $0) })
        unsetenv(name)
        #expect(ProcessEnvironment.current()[name] == nil)
    }
}

/// The `directus-bridge` binary links no Foundation: its libraries (with ICU) were about 8 MiB of every bridge
/// process's resident set, for `ProcessInfo.environment` alone (BENCHMARKS.md, "steady RSS"). Every Swift target
/// except the benchmark and fuzz executables is part of the binary.
@Suite struct BinaryWithoutFoundationTests {
    @Test func noTargetOfTheBinaryImportsFoundation() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
        let notInTheBinary: Set<String> = ["BridgeBenchmarks", "BridgeFuzz"]
        var offenders: [String] = []
        var swiftFiles = 0
        let targets = try FileManager.default.contentsOfDirectory(atPath: sources.path)
        for target in targets.sorted() where target.hasPrefix("Bridge") && !notInTheBinary.contains(target) {
            let enumerator = FileManager.default.enumerator(atPath: sources.appendingPathComponent(target).path)
            while let file = enumerator?.nextObject() as? String {
                guard file.hasSuffix(".swift") else { continue }
                swiftFiles += 1
                let text = try String(
                    contentsOf: sources.appendingPathComponent(target).appendingPathComponent(file), encoding: .utf8)
                for line in text.split(separator: "\n") {
                    let words = line.split(separator: " ")
                    if let at = words.firstIndex(of: "import"), at + 1 < words.count,
                        words[at + 1].hasPrefix("Foundation"), words[..<at].allSatisfy({ !$0.hasPrefix("//") })
                    {
                        offenders.append("\(target)/\(file): \(line)")
                    }
                }
            }
        }
        #expect(swiftFiles > 100)
        #expect(offenders == [])
    }
}
