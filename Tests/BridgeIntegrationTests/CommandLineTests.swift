import BridgeTestSupport
import Foundation
import Testing

/// The command line of the real binary (README.md, "The command line"): `COMMAND --help` for every command, `-c` for
/// `--config`, `run --log-level/--log-format` over the file's `log`, and `status --json`.
@Suite(.serialized) struct CommandLineTests {
    /// Runs `directus-bridge <arguments>` in `directory` and returns (exit status, stdout lines, stderr).
    func run(_ arguments: [String], in directory: URL) throws -> (status: Int32?, stdout: [String], stderr: String) {
        let process = try BridgeProcess(arguments: arguments, directory: directory)
        let status = process.waitForExit(timeout: 20)
        return (status, process.lines, process.stderr)
    }

    /// Every command's help, with `--help` or `-h`, on stdout with exit 0: no config is read (there is none here).
    @Test(arguments: ["run", "validate", "check", "dlq", "dlq list", "dlq replay", "dlq purge", "resync", "status"])
    func everyCommandPrintsItsHelp(command: String) throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "command-help")
        defer { try? FileManager.default.removeItem(at: directory) }
        let words = command.split(separator: " ").map(String.init)
        for flag in ["--help", "-h"] {
            let result = try run(words + [flag], in: directory)
            #expect(result.status == 0, "\(command) \(flag): \(result.stderr)")
            #expect(result.stderr.isEmpty, "\(command) \(flag): \(result.stderr)")
            #expect(result.stdout.first?.hasPrefix("Usage:") == true, "\(command) \(flag): \(result.stdout)")
            #expect(result.stdout.contains { $0.contains("directus-bridge \(command)") }, "\(result.stdout)")
        }
        let options = try run(words + ["--help"], in: directory).stdout.joined(separator: "\n")
        if command != "dlq" { #expect(options.contains("-c, --config PATH"), "\(options)") }
    }

    /// `--version` names every linked C library with the version the library reports at run time: the same as the
    /// development package's pkg-config file says, library by library (Debian ships them together).
    @Test func versionNamesEveryLinkedLibrary() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "version")
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try run(["--version"], in: directory)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
        #expect(result.stdout.first?.hasPrefix("directus-bridge ") == true, "\(result.stdout)")
        let shown = Dictionary(
            result.stdout.dropFirst().map { line -> (String, String) in
                let words = line.split(separator: " ").map(String.init)
                return (words.first ?? "", words.last ?? "")
            }, uniquingKeysWith: { first, _ in first })
        // Each C library the binary links (its NEEDED entries): the name --version gives it, and its pkg-config
        // package. One linked but missing here (a new sink's client library) fails until --version names it.
        let known: [String: (library: String, package: String)] = [
            "libcurl": ("libcurl", "libcurl"), "libssl": ("OpenSSL", "openssl"), "libcrypto": ("OpenSSL", "openssl"),
            "libsqlite3": ("SQLite", "sqlite3"), "libyaml-0": ("libyaml", "yaml-0.1"),
            "libmicrohttpd": ("libmicrohttpd", "libmicrohttpd"), "librdkafka": ("librdkafka", "rdkafka"),
            "libnats": ("libnats", "libnats"), "libhiredis": ("hiredis", "hiredis"),
            "libmosquitto": ("libmosquitto", "libmosquitto"), "librabbitmq": ("librabbitmq", "librabbitmq"),
        ]
        // glibc's and the compiler's; libresolv (glibc's) is linked by the AddressSanitizer runtime.
        let system = [
            "libc", "libm", "libstdc++", "libgcc_s", "ld-linux-x86-64", "ld-linux-aarch64", "libpthread", "libdl",
            "libresolv",
        ]
        let toolchain = ["libswift", "libFoundation", "lib_Foundation", "libdispatch", "libBlocksRuntime", "libicu"]
        var packages: [String: String] = [:]
        for needed in try Self.neededLibraries() {
            let stem = String(needed.prefix { $0 != "." })
            if system.contains(stem) || toolchain.contains(where: { stem.hasPrefix($0) }) { continue }
            guard let entry = known[stem] else {
                Issue.record("the binary links \(needed), which --version does not name")
                continue
            }
            packages[entry.library] = entry.package
        }
        #expect(packages.count >= 8, "\(packages)")
        #expect(Set(shown.keys) == Set(packages.keys), "\(result.stdout)")
        for (library, package) in packages {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/pkg-config")
            process.arguments = ["--modversion", package]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let expected = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            process.waitUntilExit()
            #expect(
                shown[library] == expected,
                "\(library): --version says \(shown[library] ?? "nothing"), pkg-config \(expected)")
        }
    }

    /// The binary's NEEDED entries (`readelf -d`): the shared libraries it links.
    static func neededLibraries() throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/readelf")
        process.arguments = ["-d", TestEnvironment.bridgeBinary]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text.matches(of: /Shared library: \[([^\]]+)\]/).map { String($0.output.1) }
    }

    /// `-c PATH` reads the file `--config PATH` reads, for a command that validates and one that reads the state.
    @Test func dashCNamesTheConfigFile() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "dash-c")
        defer { try? FileManager.default.removeItem(at: directory) }
        let yaml = activityConfig(url: "http://127.0.0.1:9", subscriptions: "  - collection: articles")
        try yaml.write(to: directory.appendingPathComponent("other.yaml"), atomically: true, encoding: .utf8)
        let validate = try run(["validate", "-c", "other.yaml"], in: directory)
        #expect(validate.status == 0 && validate.stdout == ["ok"], "\(validate.stderr)")
        let status = try run(["status", "-c", "other.yaml"], in: directory)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains { $0.hasPrefix("subscription  articles") }, "\(status.stdout)")
        // Without it the default ./bridge.yaml is read, and is not there.
        let missing = try run(["validate"], in: directory)
        #expect(missing.status == 78 && missing.stderr.hasPrefix("bridge.yaml:1:1: cannot read"), "\(missing.stderr)")
    }

    /// The file says `error` and `text`; `--log-level debug --log-format json` wins: debug lines, each a JSON object.
    @Test func runTakesItsLogLevelAndFormatFromTheCommandLine() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let yaml = liveConfig(url: emulator.url).replacingOccurrences(of: "  level: debug", with: "  level: error")
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "log-overrides")
        try yaml.write(to: directory.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
        let bridge = try BridgeProcess(
            arguments: ["run", "-c", "bridge.yaml", "--log-level", "debug", "--log-format", "json"],
            directory: directory)
        let objects = { (bridge: BridgeProcess) -> [[String: Any]] in
            bridge.stderr.split(separator: "\n").compactMap {
                (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
            }
        }
        #expect(
            bridge.waitUntil { objects($0).contains { $0["level"] as? String == "debug" } }, "\(bridge.stderr)")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
        let lines = bridge.stderr.split(separator: "\n")
        #expect(!lines.isEmpty && objects(bridge).count == lines.count, "every line is JSON: \(bridge.stderr)")

        // A level the file would not take either is a usage error (64), named.
        let wrong = try run(["run", "-c", "bridge.yaml", "--log-level", "verbose"], in: directory)
        #expect(wrong.status == 64)
        #expect(wrong.stderr.contains("--log-level: unknown value \"verbose\""), "\(wrong.stderr)")
    }

    /// `status --json`: one object on stdout, without a service (http.listen off) and beside a running one.
    @Test func statusPrintsOneJSONObject() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let port = try freeLoopbackPort()
        let listen = "http:\n  listen: 127.0.0.1:\(port)"
        let bridge = try BridgeProcess.run(
            config: activityConfig(url: emulator.url, subscriptions: "  - collection: articles", extra: listen))
        #expect(bridge.waitForLog("reading the activity log"), "\(bridge.stderr)")
        let key = try emulator.create("articles", ["title": "status", "status": "draft"])
        #expect(bridge.waitUntil { $0.events.contains { $0["key"] as? String == key } }, "\(bridge.stderr)")

        func status() throws -> [String: Any] {
            let result = try run(["status", "-c", "bridge.yaml", "--json"], in: bridge.directory)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.count == 1, "\(result.stdout)")
            return try #require(
                (try? JSONSerialization.jsonObject(with: Data((result.stdout.first ?? "").utf8))) as? [String: Any])
        }
        #expect(bridge.waitUntil { _ in ((try? status())?["service"] as? [String: Any])?["ready"] as? Bool == true })
        let running = try status()
        let service = try #require(running["service"] as? [String: Any])
        #expect(service["state"] as? String == "running" && service["role"] as? String == "active")
        #expect(service["url"] as? String == "http://127.0.0.1:\(port)")
        #expect(running["mode"] as? String == "activity" && running["mode_in_force"] as? Bool == true)
        let activity = try #require(running["activity"] as? [String: Any])
        #expect((activity["head"] as? Int ?? 0) >= 1 && activity["catching_up"] is Bool, "\(activity)")
        let sink = try #require((running["sinks"] as? [[String: Any]])?.first)
        #expect(sink["type"] as? String == "ndjson" && sink["dead_letters"] as? Int == 0, "\(sink)")
        #expect(sink["cursor"] is Int && sink["outbox"] is NSNull, "\(sink)")
        let subscription = try #require((running["subscriptions"] as? [[String: Any]])?.first)
        #expect(subscription["uid"] as? String == "articles")
        let state = try #require((subscription["sinks"] as? [[String: Any]])?.first)
        #expect((state["snapshot"] as? [String: Any])?["state"] as? String == "none", "\(state)")

        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
        let stopped = try status()
        #expect((stopped["service"] as? [String: Any])?["state"] as? String == "not_running", "\(stopped)")
        #expect(stopped["mode_in_force"] as? Bool == false)
        #expect(((stopped["sinks"] as? [[String: Any]])?.first?["cursor"] as? Int ?? 0) >= 1, "\(stopped)")
    }
}
