import BridgeAMQP
import BridgeConfig
import BridgeHTTP
import BridgeHTTPServer
import BridgeKafka
import BridgeMQTT
import BridgeNATS
import BridgeRedis
import BridgeStore
import BridgeTLS

/// What `--version` prints and the `user-agent` carries.
public enum Version {
    /// The package version (the VERSION file).
    public static var number: String { BuildInfo.version }
    /// The git commit the binary was built from (`-dirty` when the tree had changes).
    public static var commit: String { BuildInfo.commit }
    /// `directus-bridge 0.1.0 (commit abc123)`.
    public static var line: String { "directus-bridge \(number) (commit \(commit))" }
    /// Every C library the binary links, with the version each reports at run time (`--version`'s lines after the
    /// first): what a bug report needs when the distribution updates a library under the same binary.
    public static var libraries: [(name: String, version: String)] {
        [
            (CurlLibrary.name, CurlLibrary.version), (OpenSSLLibrary.name, OpenSSLLibrary.version),
            (SQLiteLibrary.name, SQLiteLibrary.version), (YAMLLibrary.name, YAMLLibrary.version),
            (MicroHTTPDLibrary.name, MicroHTTPDLibrary.version), (KafkaLibrary.name, KafkaLibrary.version),
            (NATSLibrary.name, NATSLibrary.version), (RedisLibrary.name, RedisLibrary.version),
            (MQTTLibrary.name, MQTTLibrary.version), (AMQPLibrary.name, AMQPLibrary.version),
        ]
    }
    /// `--version`: the `line`, then one `  library version` line per linked C library.
    public static var report: String {
        ([line] + libraries.map { "  \($0.name) \($0.version)" }).joined(separator: "\n")
    }
    /// `directus-bridge/0.1.0`, the HTTP user agent.
    public static var userAgent: String { "directus-bridge/\(number)" }
}
