import BridgeTestSupport
import Foundation
import Testing

/// CI's integration stage tests the binary that ships: the stripped, statically linked release build that
/// `scripts/package.sh` puts into `dist/` and into the .deb (docs/RELIABILITY.md "What CI runs"). `scripts/test.sh
/// --stage=integration` points `BRIDGE_BINARY` at it and sets `BRIDGE_SHIPPED_BINARY=1`; this test checks that the
/// binary the suite starts really is that build, so a run that fell back to the debug binary fails. Elsewhere (a
/// developer's filtered run, a sanitized run) it skips itself, which a CI run does not allow.
@Suite struct ShippedBinaryTests {
    static var expectsShippedBinary: Bool {
        ProcessInfo.processInfo.environment["BRIDGE_SHIPPED_BINARY"] == "1"
    }

    @Test(.enabled(if: expectsShippedBinary, "only where scripts/test.sh tests the shipped binary"))
    func theIntegrationSuiteRunsTheShippedBinary() throws {
        let binary = TestEnvironment.bridgeBinary
        #expect(binary.hasPrefix(TestEnvironment.repositoryRoot.path + "/dist/directus-bridge-"), "\(binary)")

        // `readelf -d`: the shared libraries it needs; the Swift runtime is linked in (--static-swift-stdlib).
        let dynamic = try Self.output(of: "/usr/bin/readelf", ["-d", binary])
        let needed = dynamic.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(!needed.isEmpty, "readelf found no NEEDED entries: \(dynamic.prefix(300))")
        let swiftRuntime = needed.filter { $0.contains("libswift") || $0.contains("libFoundation") }
        #expect(swiftRuntime.isEmpty, "\(swiftRuntime)")
        // `readelf -S`: stripped, its symbols in the .debug file beside it (a debuglink section instead).
        let sections = try Self.output(of: "/usr/bin/readelf", ["-S", "-W", binary])
        #expect(!sections.contains(".debug_info"), "the shipped binary is stripped")
        #expect(sections.contains(".gnu_debuglink"))
        #expect(try TestEnvironment.bridgeSanitizers().isEmpty, "built without a sanitizer")
    }

    static func output(of tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
