import BridgeTestSupport
import Foundation
import Testing

/// The stream EVENTS (subjects `directus.>`) that the JetStream tests create and read back with nats-py
/// (Tests/tools/broker_peers/nats_admin.py).
enum EventsStream {
    /// A started single nats-server (in a new temporary directory named after `prefix`) with the stream created.
    static func singleServer(prefix: String) throws -> NATSServer {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: prefix)
        let server = try NATSServer(name: "single", in: directory)
        try server.start()
        try create([server], replicas: 1)
        return server
    }

    /// The servers' URLs, comma-separated, for nats_admin.py.
    static func urls(_ servers: [NATSServer]) -> String { servers.map(\.url).joined(separator: ",") }

    /// Creates the stream on `servers` with `replicas` copies of each message; with `acknowledging: false`, one that
    /// stores what it is sent without ever acknowledging a publish (`no_ack`); with `maxMessageSize`, one that
    /// refuses larger messages for good; with `maxMessages`, one that is full at that many (discard new: it refuses
    /// the next until the limit is raised).
    static func create(
        _ servers: [NATSServer], replicas: Int, acknowledging: Bool = true, maxMessageSize: Int? = nil,
        maxMessages: Int? = nil
    ) throws {
        let result = try PythonTool.run(
            script: "broker_peers/nats_admin.py",
            arguments: ["create-stream", urls(servers), "EVENTS", "directus.>", "--replicas", String(replicas)]
                + (acknowledging ? [] : ["--no-ack"]) + (maxMessageSize.map { ["--max-msg-size", String($0)] } ?? [])
                + (maxMessages.map { ["--max-msgs", String($0)] } ?? []))
        try #require(result.status == 0, "create-stream: \(result.stderr)")
    }

    /// Changes the stream's largest message (-1: no limit of its own).
    static func setMaxMessageSize(_ servers: [NATSServer], _ bytes: Int) throws {
        let result = try PythonTool.run(
            script: "broker_peers/nats_admin.py",
            arguments: ["set-max-msg-size", urls(servers), "EVENTS", String(bytes)])
        try #require(result.status == 0, "set-max-msg-size: \(result.stderr)")
    }

    /// Changes the stream's message limit (-1: none).
    static func setMaxMessages(_ servers: [NATSServer], _ count: Int) throws {
        let result = try PythonTool.run(
            script: "broker_peers/nats_admin.py",
            arguments: ["set-max-msgs", urls(servers), "EVENTS", String(count)])
        try #require(result.status == 0, "set-max-msgs: \(result.stderr)")
    }

    /// One message of the stream EVENTS as nats-py read it, with its event parsed.
    struct Stored: Decodable {
        var seq: Int
        var subject: String
        var msg_id: String
        var data: String

        var event: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any] ?? [:]
        }
    }

    /// Every message of the stream, in stream order; empty when it cannot be read.
    static func read(_ servers: [NATSServer]) -> [Stored] {
        guard
            let result = try? PythonTool.run(
                script: "broker_peers/nats_admin.py", arguments: ["read-stream", urls(servers), "EVENTS"]),
            result.status == 0, let line = result.stdout.split(separator: "\n").last
        else { return [] }
        struct Output: Decodable { var messages: [Stored] }
        return (try? JSONDecoder().decode(Output.self, from: Data(line.utf8)).messages) ?? []
    }

    /// Reads the stream (once a second: each read starts a Python process) until it holds `count` messages.
    static func waitFor(_ servers: [NATSServer], count: Int, timeout: TimeInterval = 60) -> [Stored] {
        let deadline = Date().addingTimeInterval(TestEnvironment.patient(timeout))
        var stored = read(servers)
        while stored.count < count && Date() < deadline {
            sleep(1)
            stored = read(servers)
        }
        return stored
    }
}
