import BridgeMQTT
import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

/// The client connecting again by itself: what it asks of the broker (seen through a proxy that reports each CONNECT
/// and cuts connections, Tests/tools/broker_peers/mqtt_cutting_proxy.py), and a broker whose port drops SYNs.
@Suite(.timeLimit(.minutes(5)))
struct MQTTReconnectTests {
    /// A reconnect must ask for the session's expiry as the first connect did. Without it (MQTT 5: no Session Expiry
    /// Interval means 0) the broker ends the session with that connection: a QoS 2 message the broker holds until its
    /// PUBREL is dropped at the next loss, and the client's PUBREL after that reconnect finds nothing to release.
    @Test func aReconnectKeepsAskingTheBrokerToKeepTheSession() async throws {
        let broker = try await startedMosquitto()
        let proxy = try await PythonServer.start(
            script: "broker_peers/mqtt_cutting_proxy.py",
            arguments: ["--target", "\(broker.port)"]
        )
        let client = try await MQTTClient.connect(
            settings: try MQTTSettings(
                url: "mqtt://127.0.0.1:\(proxy.port)",
                clientID: "bridge-reconnect-session",
                sessionExpiry: .seconds(3_600)
            )
        )
        #expect(try await connects(proxy, count: 1).first?.sessionExpiry == 3_600, "the first connect")
        try cut(proxy)
        let reports = try await connects(proxy, count: 2)
        #expect(reports.count == 2, "the client connected again: \(proxy.log)")
        #expect(reports.last?.sessionExpiry == 3_600, "the reconnect's CONNECT: \(proxy.log)")
        #expect(reports.last?.cleanStart == false)
        // And the connection it made is a working one.
        let outcomes = await client.publish(mqttMessages(count: 10, items: 2), timeout: .seconds(60))
        #expect(outcomes.allSatisfy { $0.error == nil })
        await client.close()
    }

    /// The first connect to a port that drops SYNs: libmosquitto's connect blocks in connect(2) for the kernel's
    /// retries (127 s with Linux's default tcp_syn_retries 6), and the connect waited for it. It fails as retriable
    /// within the connect timeout now (the network thread that makes it is left to end by itself).
    @Test func aFirstConnectToAPortThatDropsSYNsFailsWithinTheConnectTimeout() async throws {
        let port = try freeLoopbackPort()
        let address = SocketAddress(ipAddress: "127.0.0.1", port: port)!
        // Backlog 0: one connection fills the queue, and the kernel drops every SYN after it.
        let full = try ListeningSocket(binding: address, backlog: 0)
        let queued = try Socket.connect(to: address, deadline: .now + .seconds(TestEnvironment.patient(10)))
        let started = ContinuousClock.now
        var failure: MQTTError?
        do {
            let client = try await MQTTClient.connect(
                settings: try MQTTSettings(
                    url: "mqtt://127.0.0.1:\(port)",
                    clientID: "bridge-first",
                    connectTimeout: .seconds(2)
                )
            )
            await client.close()
        } catch {
            failure = error
        }
        let took = ContinuousClock.now - started
        #expect(failure?.kind == .retriable, "\(String(describing: failure))")
        #expect(took < .seconds(min(TestEnvironment.patient(20), 60)), "the connect took \(took)")
        withExtendedLifetime((full, queued)) {}
    }

    /// A close while the network thread reconnects to a port that drops SYNs now (a listener that never accepts, its
    /// queue full): a blocking connect(2) would wait out the kernel's retries (127 s with Linux's default
    /// tcp_syn_retries 6), and the close, which waits for the thread at most the connect timeout, would leave the
    /// thread, its handle and the connection attempt behind for that long. The reconnect does not block: the close
    /// returns at once and the attempt ends with the thread.
    @Test func aCloseDuringAReconnectToAPortThatDropsSYNsEndsTheAttempt() async throws {
        let broker = try await startedMosquitto()
        var client: MQTTClient? = try await MQTTClient.connect(
            settings: try MQTTSettings(url: broker.url(), clientID: "bridge-blocked", connectTimeout: .seconds(2))
        )
        try await broker.stop()
        // Backlog 0: one connection fills the queue, and the kernel drops every SYN after it.
        let address = SocketAddress(ipAddress: "127.0.0.1", port: broker.port)!
        let full = try ListeningSocket(binding: address, backlog: 0)
        let queued = try Socket.connect(to: address, deadline: .now + .seconds(TestEnvironment.patient(10)))
        let lostBy = ContinuousClock.now + .seconds(TestEnvironment.patient(30))
        while client?.status.disconnects ?? 0 < 1 && ContinuousClock.now < lostBy {
            try await Task.sleep(for: .milliseconds(50))  // polling a status nothing announces
        }
        #expect(client?.status.disconnects ?? 0 >= 1, "the client saw the broker go")
        // The reconnect is due 1 s (jittered) after the loss; its SYN then waits for an answer that never comes.
        let attemptBy = ContinuousClock.now + .seconds(TestEnvironment.patient(30))
        while connectionAttempts(toPort: broker.port) == 0 && ContinuousClock.now < attemptBy {
            try await Task.sleep(for: .milliseconds(50))  // the kernel's table announces nothing
        }
        #expect(connectionAttempts(toPort: broker.port) > 0, "the client tried to connect again")
        let closing = ContinuousClock.now
        await client?.close()
        let took = ContinuousClock.now - closing
        #expect(took < .seconds(min(TestEnvironment.patient(20), 60)), "the close took \(took)")
        client = nil  // what a sink does after the close: the connection attempt belongs to the handle
        let endedBy = ContinuousClock.now + .seconds(TestEnvironment.patient(20))
        while connectionAttempts(toPort: broker.port) > 0 && ContinuousClock.now < endedBy {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(connectionAttempts(toPort: broker.port) == 0, "the attempt ended with the client")
        withExtendedLifetime((full, queued)) {}
    }

    /// IPv4 TCP sockets of this network namespace waiting for a SYN's answer (SYN_SENT) to 127.0.0.1:`port`.
    func connectionAttempts(toPort port: Int) -> Int {
        let remote = String(format: "0100007F:%04X", port)
        // procfs reports a size of 0: read until the end, not by the size.
        let data = (try? FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/net/tcp")).readToEnd()) ?? nil
        let table = String(decoding: data ?? Data(), as: UTF8.self)
        return table.split(separator: "\n").dropFirst().filter { line in
            let columns = line.split(separator: " ")
            return columns.count > 3 && columns[2] == remote && columns[3] == "02"
        }.count
    }

    /// One CONNECT as the proxy reported it.
    struct ConnectReport {
        var sessionExpiry: Int?
        var cleanStart: Bool
    }

    /// The CONNECTs the proxy reported, once there are `count` (or after 60 s, stretched).
    func connects(_ proxy: PythonServer, count: Int) async throws -> [ConnectReport] {
        func reports() -> [ConnectReport] {
            proxy.log.split(separator: "\n").compactMap { line -> ConnectReport? in
                guard line.hasPrefix("{"),
                    let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    object["connect"] != nil
                else { return nil }
                return ConnectReport(
                    sessionExpiry: object["session_expiry"] as? Int,
                    cleanStart: object["clean_start"] as? Bool ?? true
                )
            }
        }
        _ = await pollUntil(timeout: .seconds(60)) { reports().count >= count }
        return reports()
    }

    /// Cuts every connection the proxy pipes (a connection to its control port).
    func cut(_ proxy: PythonServer) throws {
        let line = proxy.log.split(separator: "\n").first { $0.hasPrefix("CONTROL ") }
        let port = try #require(line.flatMap { Int($0.dropFirst("CONTROL ".count)) }, "no CONTROL line: \(proxy.log)")
        let address = try #require(SocketAddress(ipAddress: "127.0.0.1", port: port))
        let control = try Socket.connect(to: address, deadline: .now + .seconds(TestEnvironment.patient(10)))
        withExtendedLifetime(control) {}
    }
}
