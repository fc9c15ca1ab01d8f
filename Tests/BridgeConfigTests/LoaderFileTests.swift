import BridgeActivity
import BridgeConfig
import BridgeCore
import BridgeDirectus
import BridgeEvents
import BridgeSinks
import BridgeSystem
import BridgeTestSupport
import Foundation
import Synchronization
import Testing

@Suite struct LoaderFileTests {
    @Test func missingFileIsAnIssueAtTheStartNamingThePathAsGiven() {
        let result = ConfigLoader.load(
            path: "no/such/bridge.yaml",
            environment: [:],
            sinkTypes: SinkCatalog.configTypes
        )
        #expect(
            result.failure?.issues.map(\.description) == [
                "no/such/bridge.yaml:1:1: cannot read the configuration file: No such file or directory"
            ]
        )
    }

    @Test func directoryIsNotAConfiguration() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "config-dir")
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = ConfigLoader.load(path: directory.path, environment: [:], sinkTypes: SinkCatalog.configTypes)
        #expect(
            result.failure?.issues.map(\.description) == [
                "\(directory.path):1:1: cannot read the configuration file: is a directory"
            ]
        )
    }

    @Test func readsTheFileAndItsSecretFilesFromDisk() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "config-files")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenPath = directory.appendingPathComponent("token").path
        let secretPath = directory.appendingPathComponent("hook-secret").path
        try "disk-token\n".write(toFile: tokenPath, atomically: true, encoding: .utf8)
        try "whsec_AAAAAAAA\n\n".write(toFile: secretPath, atomically: true, encoding: .utf8)
        let yaml = minimalYAML.replacingOnce("token: secret-token", with: "token_file: ${SECRETS}/token")
            .replacingOnce(
                "  - type: ndjson\n",
                with: "  - type: webhook\n    url: http://h\n    secret_file: \(secretPath)\n"
            )
        let configPath = directory.appendingPathComponent("bridge.yaml").path
        try yaml.write(toFile: configPath, atomically: true, encoding: .utf8)

        let config = try ConfigLoader.load(
            path: configPath,
            environment: ["SECRETS": directory.path],
            sinkTypes: SinkCatalog.configTypes
        ).get()
        #expect(config.directus.auth.credentials == .token("disk-token"))
        #expect(config.allSecrets.contains("whsec_AAAAAAAA"))
    }

    @Test func secretFileThatIsNotUTF8IsReported() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "config-binary")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenPath = directory.appendingPathComponent("token").path
        try Data([0xFF, 0xFE, 0x00]).write(to: URL(fileURLWithPath: tokenPath))
        let yaml = minimalYAML.replacingOnce("token: secret-token", with: "token_file: \(tokenPath)")
        let result = ConfigLoader.parse(
            text: yaml,
            path: "bridge.yaml",
            environment: [:],
            sinkTypes: SinkCatalog.configTypes
        )
        #expect(
            result.failure?.issues.map(\.description) == [
                "bridge.yaml:4:17: directus.auth.token_file: \"\(tokenPath)\" is not UTF-8 text"
            ]
        )
    }

    @Test func parseIsHermetic() {
        // The process environment is never read: HOME is set for every test process, yet undefined here.
        let yaml = minimalYAML.replacingOnce("secret-token", with: "${HOME}")
        #expect(issues(yaml).first?.contains("undefined variable \"HOME\"") == true)
    }

    /// Reads `path` with `files` on a thread of its own and waits at most `seconds` for the answer (nil: none came).
    /// The wait (a second and more: the pipe wait) is on `BlockingExecutor.shared`, not a cooperative thread.
    func readWithDeadline(
        _ path: String,
        _ files: LocalFileSystem,
        seconds: Int,
        use: ConfigFileUse = .readOnce
    ) async throws -> Result<[UInt8], ConfigFileProblem>? {
        try await BlockingExecutor.shared.perform {
            let answer = Mutex<Result<[UInt8], ConfigFileProblem>?>(nil)
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                let result = files.readFile(atPath: path, use: use)
                answer.withLock { $0 = result }
                done.signal()
            }
            _ = done.wait(timeout: .now() + .seconds(seconds))
            return answer.withLock { $0 }
        }
    }

    /// A named pipe given as the configuration (or a `*_file`, `ca_file`) by mistake: `open` waited for a writer
    /// forever, so `validate` and `run` hung without a word. Now nothing written within the wait is a problem naming
    /// the pipe; a writer that comes within it is read as before.
    @Test func aNamedPipeNothingWritesToIsAProblemNotAHang() async throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "config-fifo")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("bridge.yaml").path
        try #require(mkfifo(path, 0o600) == 0)
        defer {
            // Releases a reader still blocked in open (the defect): a writer that opens and closes gives it EOF.
            let writer = open(path, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
        }
        let files = LocalFileSystem(pipeWait: .seconds(1))
        let silent = try await readWithDeadline(path, files, seconds: 30)
        #expect(silent?.failure?.reason.contains("named pipe") == true, "\(String(describing: silent))")

        // A writer that comes within the wait is read in full.
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 0.2)
            let writer = open(path, O_WRONLY)
            guard writer >= 0 else { return }
            _ = "ok: yes\n".withCString { write(writer, $0, 8) }
            close(writer)
        }
        let written = try await readWithDeadline(path, LocalFileSystem(pipeWait: .seconds(20)), seconds: 60)
        #expect((try? written?.get()).map { String(decoding: $0, as: UTF8.self) } == "ok: yes\n")
    }

    /// A file a library opens again later by its path (a CA file, a credentials file) must be a regular file: a pipe
    /// is refused at once, not waited for, since whatever is written to it now is gone when the library opens it.
    @Test func aFileALibraryReopensIsRefusedAtOnceUnlessRegular() async throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "library-fifo")
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("ca.fifo").path
        try #require(mkfifo(fifo, 0o600) == 0)
        let regular = directory.appendingPathComponent("ca.pem").path
        try "-----BEGIN CERTIFICATE-----\n".write(toFile: regular, atomically: true, encoding: .utf8)
        let files = LocalFileSystem(pipeWait: .seconds(600))
        let pipe = try await readWithDeadline(fifo, files, seconds: 60, use: .reopenedByLibrary)
        #expect(
            pipe?.failure?.reason
                == "is a named pipe, not a regular file (the library that uses it opens the path again)",
            "\(String(describing: pipe))"
        )
        let device = try await readWithDeadline("/dev/zero", files, seconds: 60, use: .reopenedByLibrary)
        #expect(
            device?.failure?.reason.hasPrefix("is a device, not a regular file") == true,
            "\(String(describing: device))"
        )
        #expect(
            try await readWithDeadline(directory.path, files, seconds: 60, use: .reopenedByLibrary)?.failure
                == .directory
        )
        let file = try await readWithDeadline(regular, files, seconds: 60, use: .reopenedByLibrary)
        #expect((try? file?.get()).map { String(decoding: $0, as: UTF8.self) } == "-----BEGIN CERTIFICATE-----\n")
    }
}
