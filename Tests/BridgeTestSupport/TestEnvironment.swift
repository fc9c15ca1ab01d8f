import Foundation

/// Paths and settings shared by tests: the repository root, the Python of the test venv, the built binary.
public enum TestEnvironment {
    /// The repository root (three levels above this file: Tests/BridgeTestSupport/TestEnvironment.swift).
    public static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The Python interpreter with the test tools: `$BRIDGE_PYTHON`, else `.venv/bin/python` (scripts/bootstrap.sh).
    public static var python: String {
        if let fromEnvironment = ProcessInfo.processInfo.environment["BRIDGE_PYTHON"], !fromEnvironment.isEmpty {
            return fromEnvironment
        }
        return repositoryRoot.appendingPathComponent(".venv/bin/python").path
    }

    /// A file under `Tests/tools`.
    public static func tool(_ relativePath: String) -> String {
        repositoryRoot.appendingPathComponent("Tests/tools").appendingPathComponent(relativePath).path
    }

    /// The `directus-bridge` binary built next to the test bundle (`$BRIDGE_BINARY` overrides): with the same
    /// sanitizer in `scripts/test.sh --sanitize=…` runs. The test runner's own path, not `Bundle.main.bundleURL`,
    /// which on Linux is already the runner's directory (one level up from it, the binary was never found and a
    /// plain `.build/debug` one ran in every sanitizer run).
    public static var bridgeBinary: String {
        if let fromEnvironment = ProcessInfo.processInfo.environment["BRIDGE_BINARY"], !fromEnvironment.isEmpty {
            return fromEnvironment
        }
        let runner = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let candidate = runner.deletingLastPathComponent().appendingPathComponent("directus-bridge").path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        return repositoryRoot.appendingPathComponent(".build/debug/directus-bridge").path
    }

    /// A function of each sanitizer's runtime that only that runtime has (both mention the other's `__*_init`):
    /// AddressSanitizer's, then ThreadSanitizer's.
    public static let sanitizerMarkers = ["__asan_report_load8", "__tsan_read8"]

    /// The markers of `sanitizerMarkers` the bridge binary contains: empty for a plain build. A sanitizer's
    /// allocator keeps freed memory (AddressSanitizer's quarantine holds up to 256 MiB), so a sanitized bridge's
    /// resident memory says nothing about the bridge's own.
    public static func bridgeSanitizers() throws -> Set<String> {
        let binary = try Data(contentsOf: URL(fileURLWithPath: bridgeBinary))
        return Set(sanitizerMarkers.filter { binary.range(of: Data($0.utf8)) != nil })
    }

    /// What a memory bound on the bridge must add for a sanitized build: AddressSanitizer's quarantine, 256 MiB by
    /// default, freed memory it keeps back where a plain build returns it (0 for a plain build).
    public static func sanitizerMemorySlack() throws -> Int {
        try bridgeSanitizers().isEmpty ? 0 : 256 << 20
    }

    /// How much longer than written every positive wait of the test helpers may take (`waitUntil`, `waitForLog`,
    /// `waitForExit`, a peer's start): `$BRIDGE_TEST_PATIENCE`, default 3. A wait returns as soon as its condition
    /// holds, so patience costs a passing run nothing, while a machine loaded by parallel builds and other suites
    /// (20 runnable threads on 2 cores was seen) stretches every step several-fold.
    public static let patience: Double = {
        let text = ProcessInfo.processInfo.environment["BRIDGE_TEST_PATIENCE"] ?? ""
        return Double(text).map { max(1, $0) } ?? 3
    }()

    /// `seconds` stretched by `patience`.
    public static func patient(_ seconds: TimeInterval) -> TimeInterval { seconds * patience }

    /// The environment of a helper process a test starts: this process's, with `BRIDGE_TEST_PATIENCE` set to the
    /// patience in force, so a helper's own waits (nginx starting, a cluster electing its leader) are stretched
    /// alike.
    public static func helperEnvironment(_ extra: [String: String] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["BRIDGE_TEST_PATIENCE"] = String(patience)
        environment.merge(extra) { _, new in new }
        return environment
    }

    /// The environment a bridge under test starts with: `environment` (this process's by default) without
    /// LeakSanitizer's suppressions, and with its leak check on even where the runner's is off. `Tests/sanitizers/lsan.supp` names what the test runner's libraries leak
    /// (XCTest, Foundation's `Process`); the bridge uses none of them, so under `scripts/test.sh --sanitize=address`
    /// every leak at a bridge's exit is reported, its own curl handles' included (docs/RELIABILITY.md
    /// "Suppressions").
    ///
    /// With `BRIDGE_LOG_COLLECTOR` (a directory) set, each bridge also writes a JSON copy of its log lines to a file
    /// of its own there (`DIRECTUS_BRIDGE_JSON_LOG_FILE`): `scripts/test.sh` checks every line the integration suite
    /// logged against the documented schema afterwards (`LogSchemaTests`).
    public static func bridgeEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> [String: String] {
        var result = environment
        if let options = environment["LSAN_OPTIONS"] {
            let kept = options.split(separator: ":").filter {
                !$0.hasPrefix("suppressions=") && !$0.hasPrefix("detect_leaks=")
            }
            result["LSAN_OPTIONS"] = kept.isEmpty ? nil : kept.joined(separator: ":")
        }
        if let collector = environment[logCollectorVariable], !collector.isEmpty {
            result["DIRECTUS_BRIDGE_JSON_LOG_FILE"] = collector + "/bridge-\(UUID().uuidString).ndjson"
        }
        return result
    }

    /// The directory where bridges under test leave a JSON copy of their logs, when set.
    public static let logCollectorVariable = "BRIDGE_LOG_COLLECTOR"

    /// A fresh temporary directory, removed by the caller (or left for post-mortem when a test fails).
    public static func makeTemporaryDirectory(prefix: String = "bridge-test") throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(prefix)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
