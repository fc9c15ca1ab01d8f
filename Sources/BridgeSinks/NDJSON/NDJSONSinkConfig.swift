public import BridgeConfig
internal import BridgeEvents

/// How often an NDJSON file is forced to disk (`fsync`).
public enum FsyncPolicy: String, Sendable, Equatable, CaseIterable {
    /// After every batch of lines.
    case always
    /// At least once a second, and at shutdown.
    case interval
    /// Never explicitly (the kernel decides).
    case never
}

/// An NDJSON sink (`type: ndjson`).
public struct NDJSONSinkConfig: SinkSettings, Equatable {
    /// `-` for stdout, otherwise a file appended to and reopened on SIGHUP (`path`). Default: `-`.
    public var path: String
    /// Flush policy for files (`fsync`); ignored for stdout. Default: `interval`.
    public var fsync: FsyncPolicy

    /// True when the sink writes to stdout.
    public var isStandardOutput: Bool { path == "-" }

    /// Creates an NDJSON sink configuration with the contract's defaults.
    public init(path: String = "-", fsync: FsyncPolicy = .interval) {
        self.path = path
        self.fsync = fsync
    }

    public var secrets: [String] { [] }

    public var summary: String { "ndjson:\(path)" }

    public var yamlLines: [String] { ["path: \(ConfigText.quoted(path))", "fsync: \(fsync.rawValue)"] }

    /// How `sinks` entries of `type: ndjson` are read.
    package static let configType = SinkConfigType(name: "ndjson", keys: ["path", "fsync"]) { decoder, map in
        var sink = NDJSONSinkConfig()
        if let node = map["path"], let scalar = decoder.scalar(node, field: map.field("path"), expected: "a path") {
            if scalar.text.isEmpty {
                decoder.report("\(map.field("path")) must not be empty (\"-\" is stdout)", at: node.mark)
            } else {
                sink.path = scalar.text
            }
        }
        let shown = sink.isStandardOutput ? "stdout (\"-\")" : "\"\(sink.path)\""
        decoder.claimFile(sink.path, shown: shown, by: map, key: "path")
        sink.fsync = decoder.choice(map, "fsync", default: sink.fsync)
        return sink
    }
}
