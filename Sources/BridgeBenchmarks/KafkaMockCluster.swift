internal import CRdKafka

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// librdkafka's mock Kafka cluster (`rdkafka_mock.h`): brokers that speak the Kafka protocol on loopback TCP
/// ports, in this process, for tests and benchmarks. Any Kafka client can reach them through `bootstrapServers`.
///
/// It lives in the process that made it (the test or benchmark process); other processes (a Python consumer, the
/// bridge binary) connect over TCP. Broker ids are 1...brokerCount.
package final class KafkaMockCluster {
    /// The rd_kafka_t librdkafka requires to host the cluster's bookkeeping; it produces nothing.
    private let host: OpaquePointer
    private let cluster: OpaquePointer
    /// `host:port,host:port,…` of the brokers.
    package let bootstrapServers: String
    /// The number of brokers.
    package let brokerCount: Int

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
    package static func make(brokers: Int) throws(KafkaError) -> KafkaMockCluster {
        precondition(brokers >= 1 && brokers <= 32, "a mock cluster has 1...32 brokers")
        let configuration = try KafkaConfiguration.make([("log_level", "0")])
        configuration.withPointer { rd_kafka_conf_set_log_cb($0) { _, _, _, _ in } }  // the host's logs are noise
        var errorText = [CChar](repeating: 0, count: 512)
        guard let host = configuration.consume({ rd_kafka_new(RD_KAFKA_PRODUCER, $0, &errorText, errorText.count) })
        else {
            throw KafkaError(kind: .configuration, message: "librdkafka could not make the mock cluster's host")
        }
        guard let cluster = rd_kafka_mock_cluster_new(host, Int32(brokers)),
            let servers = rd_kafka_mock_cluster_bootstraps(cluster)
        else {
            rd_kafka_destroy(host)
            throw KafkaError(kind: .retriable, message: "librdkafka could not start a mock cluster")
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

    /// Creates `topic` with `partitions` partitions, each replicated on `replicationFactor` brokers.
    package func createTopic(_ topic: String, partitions: Int, replicationFactor: Int) throws(KafkaError) {
        try check(rd_kafka_mock_topic_create(cluster, topic, Int32(partitions), Int32(replicationFactor)).rawValue)
    }

    /// Makes `broker` the leader of `topic`'s `partition` (a leader change: producers learn it from
    /// NOT_LEADER_FOR_PARTITION answers and new metadata).
    package func setLeader(topic: String, partition: Int32, broker: Int32) throws(KafkaError) {
        try check(rd_kafka_mock_partition_set_leader(cluster, topic, partition, broker).rawValue)
    }

    /// Disconnects `broker` and refuses new connections to it (leaders do not move).
    package func setBrokerDown(_ broker: Int32) throws(KafkaError) {
        try check(rd_kafka_mock_broker_set_down(cluster, broker).rawValue)
    }

    /// Lets `broker` accept connections again.
    package func setBrokerUp(_ broker: Int32) throws(KafkaError) {
        try check(rd_kafka_mock_broker_set_up(cluster, broker).rawValue)
    }

    /// Delays every answer of `broker` by `milliseconds`.
    package func setRoundTripTime(broker: Int32, milliseconds: Int) throws(KafkaError) {
        try check(rd_kafka_mock_broker_set_rtt(cluster, broker, Int32(milliseconds)).rawValue)
    }

    /// The next `errors.count` produce requests (to any broker) fail with these codes, in order.
    package func failNextProduceRequests(with errors: [KafkaError.Code]) {
        let codes = errors.map { rd_kafka_resp_err_t(rawValue: $0.rawValue) }
        codes.withUnsafeBufferPointer { codes in
            rd_kafka_mock_push_request_errors_array(cluster, crdkafka_api_key_produce, codes.count, codes.baseAddress)
        }
    }

    /// Sets TCP_NODELAY on the brokers' listening sockets (their connections inherit it), as Kafka brokers set it.
    ///
    /// librdkafka 2.0.2's mock brokers leave Nagle's algorithm on: when one broker leads two partitions, its second
    /// small produce response waits for the client's delayed ACK (about 40 ms), so every wait for delivery reports
    /// took 40 ms or more. The sockets are found among this process's descriptors by their port (a broker that goes
    /// down and up gets a new listener without it: only timing changes).
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

    private func check(_ code: Int32) throws(KafkaError) {
        guard code == 0 else { throw KafkaError.from(code: code, context: "mock cluster") }
    }
}
