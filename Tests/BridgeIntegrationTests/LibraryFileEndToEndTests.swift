import BridgeTestSupport
import Foundation
import Testing

/// Files bridge.yaml names that a C library opens again later (docs/RELIABILITY.md "Files and transport"), with the
/// real binary: a named pipe there is a configuration error at start, in every command that loads the file.
@Suite struct LibraryFileEndToEndTests {
    /// A Kafka CA location that is a named pipe: `validate` passed, and `run` and `check` hung for good as
    /// librdkafka's OpenSSL waited in `open` for a writer while the producer was made (`run` past SIGTERM too).
    @Test func aNamedPipeAsAKafkaCALocationExits78InsteadOfHanging() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "kafka-ca-fifo")
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("ca.fifo").path
        try #require(mkfifo(fifo, 0o600) == 0)
        defer {
            // Releases a bridge still blocked in open (the defect): a writer that opens and closes gives it EOF.
            let writer = open(fifo, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
        }
        let yaml = """
            directus:
              url: http://127.0.0.1:1
              auth:
                token: t
            delivery:
              mode: live
            subscriptions:
              - collection: articles
            sinks:
              - type: kafka
                brokers: ["127.0.0.1:1"]
                properties:
                  security.protocol: ssl
                  ssl.ca.location: ca.fifo

            """
        try yaml.write(to: directory.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
        for command in ["validate", "check", "run"] {
            let bridge = try BridgeProcess(arguments: [command, "--config", "bridge.yaml"], directory: directory)
            #expect(bridge.waitForExit(timeout: 20) == 78, "\(command): \(bridge.stderr)")
            #expect(
                bridge.stderr.contains(
                    "bridge.yaml:14:24: sinks[0].properties.ssl.ca.location: cannot read \"ca.fifo\": is a named pipe, "
                        + "not a regular file"),
                "\(command): \(bridge.stderr)")
        }
    }

    /// `directus.tls.ca_file` as a named pipe was waited for 10 s like a secret file, and passed once something wrote
    /// it; libcurl then opened the path again at each connection and waited for a writer there. Now it is refused at
    /// once.
    @Test func aNamedPipeAsDirectusCAFileIsRefusedAtOnce() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "directus-ca-fifo")
        defer { try? FileManager.default.removeItem(at: directory) }
        try #require(mkfifo(directory.appendingPathComponent("ca.fifo").path, 0o600) == 0)
        let yaml = """
            directus:
              url: https://127.0.0.1:1
              auth:
                token: t
              tls:
                ca_file: ca.fifo
            subscriptions:
              - collection: articles
            sinks:
              - type: ndjson

            """
        try yaml.write(to: directory.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
        let bridge = try BridgeProcess(arguments: ["validate", "--config", "bridge.yaml"], directory: directory)
        #expect(bridge.waitForExit(timeout: 20) == 78, "\(bridge.stderr)")
        #expect(
            bridge.stderr.contains(
                "bridge.yaml:6:14: directus.tls.ca_file: cannot read \"ca.fifo\": is a named pipe, not a regular file"),
            "\(bridge.stderr)")
    }

    /// The same mistake in `delivery.state_dir`: `cursor.db` a named pipe. `status` and `resync` (SQLite's read-only
    /// open) and `run` (creating the file before SQLite opens it) waited in `open` for a writer forever. Now each
    /// stops at once naming the file.
    @Test func aNamedPipeAsTheCursorDatabaseStopsTheCommandsInsteadOfHanging() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "cursor-fifo")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("state"), withIntermediateDirectories: false)
        let fifo = directory.appendingPathComponent("state/cursor.db").path
        try #require(mkfifo(fifo, 0o600) == 0)
        defer {
            let writer = open(fifo, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
        }
        let yaml = activityConfig(url: emulator.url, subscriptions: "  - collection: articles")
        try yaml.write(to: directory.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
        for arguments in [["status"], ["resync", "articles"], ["run"]] {
            let bridge = try BridgeProcess(arguments: arguments + ["--config", "bridge.yaml"], directory: directory)
            let status = bridge.waitForExit(timeout: 30)
            // `run` and `resync` stop as for a read-only cursor.db (78); `status` fails (1) as for any store error.
            #expect(
                status == (arguments == ["status"] ? 1 : 78),
                "\(arguments): \(String(describing: status)) \(bridge.stderr)")
            #expect(
                bridge.stderr.contains("state/cursor.db is a named pipe, not a regular file"),
                "\(arguments): \(bridge.stderr)")
        }
    }
}
