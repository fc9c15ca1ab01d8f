import BridgeSystem

/// Where the bridge keeps its progress, and whether it shares it with other bridges (`state`).
///
/// `local` (the default) keeps everything in SQLite under `delivery.state_dir`. `jetstream` keeps every sink's
/// cursor in a NATS JetStream key-value bucket, where bridges of the same `name` share it and take turns being
/// active under a lease (docs/ARCHITECTURE.md "Shared state, lease and fencing").
public struct StateConfig: Sendable, Equatable {
    /// Where the progress lives (`state.backend`).
    public enum Backend: String, Sendable, Equatable, CaseIterable {
        /// SQLite in `delivery.state_dir`.
        case local
        /// A JetStream key-value bucket on `servers`.
        case jetstream
    }

    /// Where the progress lives (`state.backend`). Default: `local`.
    public var backend: Backend
    /// NATS server URLs holding the bucket (`state.servers`). Required for `jetstream`.
    public var servers: [String]
    /// `servers` as shown in messages and `check`: `scheme://host:port` each (README.md, "How URLs are shown").
    package var shownServers: String { servers.map(ShownURL.of).joined(separator: ",") }
    /// The key-value bucket (`state.bucket`), created when missing. Default: `directus_bridge`.
    public var bucket: String
    /// Bridges with the same name share cursors and take turns being active (`state.name`). Default: `default`.
    public var name: String
    /// How long the active bridge's lease lasts without a renewal (`state.lease`), 3s…10m; renewed every third of
    /// it. Default: 10s.
    public var lease: Duration

    /// The allowed range of `lease`.
    public static let leaseRange: ClosedRange<Duration> = .seconds(3) ... .seconds(600)

    /// Creates a state configuration with the contract's defaults.
    public init(
        backend: Backend = .local, servers: [String] = [], bucket: String = "directus_bridge", name: String = "default",
        lease: Duration = .seconds(10)
    ) {
        self.backend = backend
        self.servers = servers
        self.bucket = bucket
        self.name = name
        self.lease = lease
    }

    /// Whether `text` is usable as a bucket or bridge name: 1–64 of `A-Z a-z 0-9 _ -` (one key-value token).
    public static func isValidName(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 64
            && text.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == 0x5F || byte == 0x2D
            }
    }
}
