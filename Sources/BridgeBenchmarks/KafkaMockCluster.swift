internal import CRdKafka

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// librdkafka's mock Kafka cluster (`rdkafka_mock.h`): brokers that speak the Kafka protocol on loopback TCP
/// ports, in this process, for the `kafka-sink` benchmark. Any Kafka client can reach them through
/// `bootstrapServers`; other processes (the Python peer) connect over TCP.
///
/// A benchmark tool, not part of the bridge: it lives here rather than in BridgeKafka, which makes this target the
/// only one besides BridgeKafka that imports CRdKafka. The tests use a helper process instead (docs/ARCHITECTURE.md
/// "Broker clients").
final class KafkaMockCluster {
    /// The rd_kafka_t librdkafka requires to host the cluster's bookkeeping; it produces nothing.
    private let host: OpaquePointer
    private let cluster: OpaquePointer
    /// `host:port,host:port,…` of the brokers.
    let bootstrapServers: String
    /// The number of brokers.
    let brokerCount: Int

    private init(host: OpaquePointer, cluster: OpaquePointer, bootstrapServers: String, brokerCount: Int) {
        self.host = host
        self.cluster = cluster
        self.bootstrapServers = bootstrapServers
        self.brokerCount = brokerCount
    }

    deinit {
        // The cluster first (it uses the host's threads), then the host.
        rd_kafka_mock_cluster_destroy(cluster)
        rd_kafka_destroy(host)
    }

    /// Starts a cluster of `brokers` brokers.
    static func make(brokers: Int) throws -> KafkaMockCluster {
        precondition(brokers >= 1 && brokers <= 32, "a mock cluster has 1...32 brokers")
        // rd_kafka_new owns the configuration once it succeeds; on failure it is still ours to destroy.
        guard let configuration = rd_kafka_conf_new() else {
            throw BenchmarkError(message: "librdkafka could not make a configuration")
        }
        var errorText = [CChar](repeating: 0, count: 512)
        guard rd_kafka_conf_set(configuration, "log_level", "0", &errorText, errorText.count) == RD_KAFKA_CONF_OK else {
            rd_kafka_conf_destroy(configuration)
            throw BenchmarkError(message: "librdkafka refused log_level: \(String(cString: errorText))")
        }
        rd_kafka_conf_set_log_cb(configuration) { _, _, _, _ in }  // the host's logs are noise
        guard let host = rd_kafka_new(RD_KAFKA_PRODUCER, configuration, &errorText, errorText.count) else {
            rd_kafka_conf_destroy(configuration)
            let reason = String(cString: errorText)
            throw BenchmarkError(message: "librdkafka could not make the mock cluster's host: \(reason)")
        }
        guard let cluster = rd_kafka_mock_cluster_new(host, Int32(brokers)),
            let servers = rd_kafka_mock_cluster_bootstraps(cluster)
        else {
            rd_kafka_destroy(host)
            throw BenchmarkError(message: "librdkafka could not start a mock cluster")
        }
        let ports = String(cString: servers).split(separator: ",").compactMap { $0.split(separator: ":").last }
        disableNagle(onListenersAt: Set(ports.compactMap { UInt16($0) }))
        return KafkaMockCluster(
            host: host,
            cluster: cluster,
            bootstrapServers: String(cString: servers),
            brokerCount: brokers
        )
    }

    /// Creates `topic` with `partitions` partitions, each replicated on `replicationFactor` brokers, partition `p`
    /// led by broker `p % brokerCount + 1`.
    ///
    /// librdkafka 2.0.2's mock picks each partition's leader at random: from run to run the six partitions of the
    /// benchmark's topic were led by one, two or three brokers, which moved the producer's and the brokers' CPU per
    /// event between runs of the same binary and between ours and the ceiling's cluster in the same run
    /// (BENCHMARKS.md, "Kafka: the stream against the ceiling"). `Benchmarks/kafka_ceiling.c` spreads them the same
    /// way.
    func createTopic(_ topic: String, partitions: Int, replicationFactor: Int) throws {
        try check(rd_kafka_mock_topic_create(cluster, topic, Int32(partitions), Int32(replicationFactor)))
        // Every broker holds a replica of every partition only then (a leader must hold one).
        guard replicationFactor >= brokerCount else { return }
        for partition in 0..<partitions {
            let leader = Int32(partition % brokerCount + 1)
            try check(rd_kafka_mock_partition_set_leader(cluster, topic, Int32(partition), leader))
        }
    }

    /// Sets TCP_NODELAY on the brokers' listening sockets (their connections inherit it), as Kafka brokers set it.
    ///
    /// librdkafka 2.0.2's mock brokers leave Nagle's algorithm on: when one broker leads two partitions, its second
    /// small produce response waits for the client's delayed ACK (about 40 ms), so every wait for delivery reports
    /// took 40 ms or more. The sockets are found among this process's descriptors by their port.
    private static func disableNagle(onListenersAt ports: Set<UInt16>) {
        guard let directory = opendir("/proc/self/fd") else { return }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let descriptor = Int32(name) else { continue }
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let named = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
            }
            guard named == 0, address.sin_family == sa_family_t(AF_INET),
                ports.contains(UInt16(bigEndian: address.sin_port))
            else { continue }
            var listening: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(descriptor, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) == 0, listening == 1 else {
                continue
            }
            var on: Int32 = 1
            _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    private func check(_ code: rd_kafka_resp_err_t) throws {
        guard code != RD_KAFKA_RESP_ERR_NO_ERROR else { return }
        throw BenchmarkError(message: "mock cluster: \(String(cString: rd_kafka_err2str(code)))")
    }
}
