// swift-tools-version:6.0
// directus-bridge: mirrors Directus realtime changes as NDJSON lines or signed webhooks.
//
// Module layers run one way (see docs/ARCHITECTURE.md):
//   C wrappers → BridgeSystem → BridgeTLS → BridgeWebSocket / BridgeHTTP → BridgeEvents → BridgeDirectus →
//   BridgeActivity / BridgeSinks → BridgeCore (runtime) → BridgeApp → BridgeCLI
// Each C library is imported by exactly one Swift target of the bridge (the benchmarks also host librdkafka's mock
// cluster). Every target declares exactly the targets it imports (Tests/tools/test_package_imports.py).
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// A system-library target for one Debian `-dev` package, found through pkg-config.
func cLibrary(_ name: String, pkgConfig: String, apt: String) -> Target {
    .systemLibrary(name: name, pkgConfig: pkgConfig, providers: [.apt([apt])])
}

let package = Package(
    name: "directus-bridge",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "directus-bridge", targets: ["BridgeCLI"]),
        .executable(name: "bridge-benchmarks", targets: ["BridgeBenchmarks"]),
        .executable(name: "bridge-fuzz", targets: ["BridgeFuzz"]),
    ],
    targets: [
        // MARK: C libraries (Debian packages)
        cLibrary("CCurl", pkgConfig: "libcurl", apt: "libcurl4-openssl-dev"),
        cLibrary("COpenSSL", pkgConfig: "openssl", apt: "libssl-dev"),
        cLibrary("CYAML", pkgConfig: "yaml-0.1", apt: "libyaml-dev"),
        cLibrary("CSQLite", pkgConfig: "sqlite3", apt: "libsqlite3-dev"),
        cLibrary("CMicroHTTPD", pkgConfig: "libmicrohttpd", apt: "libmicrohttpd-dev"),
        cLibrary("CRdKafka", pkgConfig: "rdkafka", apt: "librdkafka-dev"),
        // libFuzzer's driver (compiler-rt): declared only; linked by `-sanitize=fuzzer` in scripts/fuzz.sh.
        .systemLibrary(name: "CLibFuzzer"),
        cLibrary("CNats", pkgConfig: "libnats", apt: "libnats-dev"),
        // glibc's variadic prctl(2) as plain calls (libc6-dev: nothing to link).
        .systemLibrary(name: "CLinux"),
        cLibrary("CHiredis", pkgConfig: "hiredis", apt: "libhiredis-dev"),
        cLibrary("CMosquitto", pkgConfig: "libmosquitto", apt: "libmosquitto-dev"),
        cLibrary("CRabbitMQ", pkgConfig: "librabbitmq", apt: "librabbitmq-dev"),
        // OpenSSL's process-wide setup before main: it keeps its state until exit (Sources/COpenSSLInit/openssl_init.c).
        // C code of ours, used only by BridgeTLS, whose COpenSSL links libcrypto.
        .target(name: "COpenSSLInit"),

        // MARK: Layers
        .target(name: "BridgeSystem", dependencies: ["CLinux"], swiftSettings: strict),
        .target(name: "BridgeTLS", dependencies: ["BridgeSystem", "COpenSSL", "COpenSSLInit"], swiftSettings: strict),
        .target(name: "BridgeWebSocket", dependencies: ["BridgeSystem", "BridgeTLS"], swiftSettings: strict),
        .target(name: "BridgeHTTP", dependencies: ["BridgeSystem", "CCurl"], swiftSettings: strict),
        .target(name: "BridgeStore", dependencies: ["BridgeSystem", "CSQLite"], swiftSettings: strict),
        .target(name: "BridgeJSON", dependencies: ["BridgeSystem"], swiftSettings: strict),
        .target(name: "BridgeConfig", dependencies: ["BridgeSystem", "CYAML"], swiftSettings: strict),
        .target(name: "BridgeHTTPServer", dependencies: ["BridgeSystem", "CMicroHTTPD"], swiftSettings: strict),
        // Broker clients: independent of the bridge's own layers; the broker sinks (BridgeSinks) are built on them.
        .target(name: "BridgeKafka", dependencies: ["BridgeSystem", "CRdKafka"], swiftSettings: strict),
        .target(name: "BridgeNATS", dependencies: ["BridgeSystem", "BridgeJSON", "CNats"], swiftSettings: strict),
        // Redis: hiredis's reply parser only; the I/O (and TLS, which Debian's hiredis 0.14 lacks) is BridgeTLS's.
        .target(name: "BridgeRedis", dependencies: ["BridgeSystem", "BridgeTLS", "CHiredis"], swiftSettings: strict),
        .target(name: "BridgeMQTT", dependencies: ["BridgeSystem", "CMosquitto"], swiftSettings: strict),
        .target(name: "BridgeAMQP", dependencies: ["BridgeSystem", "CRabbitMQ"], swiftSettings: strict),
        // The bridge itself, in one-way layers (docs/ARCHITECTURE.md "Layers"): the event vocabulary, the Directus
        // session, the activity log, the sinks, and the runtime that wires them.
        .target(
            name: "BridgeEvents", dependencies: ["BridgeSystem", "BridgeJSON", "BridgeConfig"], swiftSettings: strict
        ),
        .target(
            name: "BridgeDirectus",
            dependencies: [
                "BridgeEvents", "BridgeSystem", "BridgeWebSocket", "BridgeHTTP", "BridgeJSON", "BridgeConfig",
            ],
            swiftSettings: strict
        ),
        .target(
            name: "BridgeActivity",
            dependencies: [
                "BridgeEvents", "BridgeDirectus", "BridgeSystem", "BridgeStore", "BridgeJSON", "BridgeConfig", "BridgeNATS",
            ],
            swiftSettings: strict
        ),
        .target(
            name: "BridgeSinks",
            dependencies: [
                "BridgeAMQP",
                "BridgeEvents", "BridgeSystem", "BridgeTLS", "BridgeHTTP", "BridgeStore", "BridgeJSON", "BridgeConfig",
                "BridgeKafka", "BridgeNATS", "BridgeRedis", "BridgeMQTT",
            ],
            swiftSettings: strict
        ),
        .target(
            name: "BridgeCore",
            dependencies: [
                "BridgeEvents", "BridgeDirectus", "BridgeActivity", "BridgeSinks", "BridgeSystem", "BridgeTLS",
                "BridgeWebSocket", "BridgeHTTP", "BridgeStore", "BridgeJSON", "BridgeConfig", "BridgeHTTPServer",
                "BridgeNATS",
            ],
            swiftSettings: strict
        ),
        .target(
            name: "BridgeApp", dependencies: ["BridgeCore", "BridgeEvents", "BridgeDirectus", "BridgeActivity", "BridgeSinks", "BridgeConfig", "BridgeStore", "BridgeSystem", "BridgeNATS", "BridgeJSON", "BridgeHTTP", "BridgeTLS", "BridgeHTTPServer", "BridgeKafka", "BridgeRedis", "BridgeMQTT", "BridgeAMQP"], swiftSettings: strict,
            plugins: ["BuildInfoPlugin"]
        ),
        .plugin(name: "BuildInfoPlugin", capability: .buildTool()),
        .executableTarget(name: "BridgeCLI", dependencies: ["BridgeApp"], swiftSettings: strict),
        .executableTarget(
            name: "BridgeBenchmarks",
            dependencies: [
                "BridgeSystem", "BridgeTLS", "BridgeWebSocket", "BridgeJSON", "BridgeCore", "BridgeEvents", "BridgeDirectus",
                "BridgeActivity", "BridgeSinks", "BridgeHTTP", "BridgeKafka", "BridgeNATS", "BridgeRedis",
                // librdkafka's mock cluster for kafka-sink (KafkaMockCluster): a benchmark tool, not the bridge's.
                "CRdKafka",
            ],
            swiftSettings: strict
        ),
        // Fuzz targets (docs/RELIABILITY.md "Fuzzing"): libFuzzer with -DBRIDGE_FUZZING, a file replayer otherwise.
        .executableTarget(
            name: "BridgeFuzz",
            dependencies: [
                "BridgeSystem", "BridgeWebSocket", "BridgeJSON", "BridgeHTTP", "BridgeConfig", "BridgeHTTPServer", "BridgeCore", "BridgeEvents", "BridgeDirectus", "BridgeActivity", "BridgeSinks", "BridgeNATS",
                "CLibFuzzer",
            ],
            swiftSettings: strict
        ),

        // MARK: Tests
        .target(name: "BridgeTestSupport", dependencies: ["BridgeSystem"], path: "Tests/BridgeTestSupport"),
        .testTarget(name: "BridgeSystemTests", dependencies: ["BridgeSystem", "BridgeTestSupport"]),
        .testTarget(
            name: "BridgeCoreTests",
            dependencies: [
                "BridgeCore", "BridgeEvents", "BridgeDirectus", "BridgeActivity", "BridgeSinks", "BridgeSystem",
                "BridgeHTTP", "BridgeJSON", "BridgeConfig", "BridgeWebSocket", "BridgeTestSupport",
            ]
        ),
        .testTarget(
            name: "BridgeAppTests", dependencies: ["BridgeApp", "BridgeSinks", "BridgeConfig", "BridgeSystem", "BridgeTestSupport"]),
        .testTarget(name: "BridgeIntegrationTests", dependencies: ["BridgeCLI", "BridgeSystem", "BridgeTestSupport"]),
        .testTarget(name: "BridgeConfigTests", dependencies: ["BridgeConfig", "BridgeCore", "BridgeEvents", "BridgeDirectus", "BridgeActivity", "BridgeSinks", "BridgeSystem", "BridgeTestSupport"]),
        .testTarget(name: "BridgeJSONTests", dependencies: ["BridgeJSON", "BridgeSystem", "BridgeTestSupport"]),
        .testTarget(name: "BridgeTLSTests", dependencies: ["BridgeTLS", "BridgeSystem"]),
        .testTarget(
            name: "BridgeWebSocketTests", dependencies: ["BridgeWebSocket", "BridgeTLS", "BridgeSystem", "BridgeTestSupport"]),
        .testTarget(name: "BridgeHTTPTests", dependencies: ["BridgeHTTP", "BridgeSystem", "BridgeTestSupport"]),
        .testTarget(name: "BridgeStoreTests", dependencies: ["BridgeStore", "BridgeSystem", "BridgeTestSupport"]),
        .testTarget(name: "BridgeHTTPServerTests", dependencies: ["BridgeHTTPServer", "BridgeSystem"]),
        .testTarget(name: "BridgeOperationsTests", dependencies: ["BridgeCore", "BridgeEvents", "BridgeDirectus", "BridgeActivity", "BridgeSinks", "BridgeConfig", "BridgeJSON", "BridgeHTTPServer", "BridgeSystem"]),
        .testTarget(name: "BridgeActivityTests", dependencies: ["BridgeCore", "BridgeEvents", "BridgeDirectus", "BridgeActivity", "BridgeSinks", "BridgeConfig", "BridgeJSON", "BridgeSystem", "BridgeTestSupport", "BridgeNATS", "BridgeHTTP", "BridgeStore"]),
        .testTarget(name: "BridgeKafkaTests", dependencies: ["BridgeKafka", "BridgeSystem", "BridgeTestSupport"]),
        .testTarget(name: "BridgeNATSTests", dependencies: ["BridgeNATS", "BridgeSystem", "BridgeTestSupport"]),
        .testTarget(name: "BridgeRedisTests", dependencies: ["BridgeRedis", "BridgeSystem", "BridgeTestSupport"]),
        .testTarget(name: "BridgeMQTTTests", dependencies: ["BridgeMQTT", "BridgeSystem", "BridgeTestSupport"]),
        .testTarget(name: "BridgeAMQPTests", dependencies: ["BridgeAMQP", "BridgeSystem", "BridgeTestSupport"]),
        .testTarget(name: "BridgeWebhookTests", dependencies: ["BridgeCore", "BridgeEvents", "BridgeDirectus", "BridgeActivity", "BridgeSinks", "BridgeHTTP", "BridgeStore", "BridgeSystem", "BridgeTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
