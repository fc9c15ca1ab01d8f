import BridgeConfig
import BridgeCore
import BridgeEvents
import BridgeSinks
import BridgeTestSupport
import Foundation
import Testing

/// Files bridge.yaml names that a C library opens again later by their path: `directus.tls.ca_file` (libcurl and the
/// WebSocket's OpenSSL, at each connection), a jetstream sink's `ca_file` and `credentials_file` (libnats, at each
/// connect) and the Kafka `properties` librdkafka documents as file paths (as the producer is made).
///
/// Before, the loader read them as it reads `*_file` secrets, pipes included: a named pipe passed `validate` once a
/// writer had written it, and the library's own open then waited for a writer forever (`run` and `check` hung, `run`
/// even past SIGTERM); Kafka's files were not looked at before librdkafka opened them. Now each must be a regular file
/// (a Kafka CA location may be a directory): anything else is a configuration error naming the key and the path.
@Suite struct LibraryFileTests {
    /// A directory holding a PEM file, a binary file, a named pipe and a subdirectory.
    struct Files {
        let directory: URL
        var pem: String { directory.appendingPathComponent("ca.pem").path }
        var binary: String { directory.appendingPathComponent("keystore.p12").path }
        var fifo: String { directory.appendingPathComponent("ca.fifo").path }
        var subdirectory: String { directory.appendingPathComponent("certs").path }
        var missing: String { directory.appendingPathComponent("missing.pem").path }

        init() throws {
            directory = try TestEnvironment.makeTemporaryDirectory(prefix: "library-files")
            try "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".write(
                toFile: directory.appendingPathComponent("ca.pem").path, atomically: true, encoding: .utf8)
            try Data([0x30, 0x82, 0x01, 0x00, 0xFF]).write(to: directory.appendingPathComponent("keystore.p12"))
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent("certs"), withIntermediateDirectories: false)
            guard mkfifo(directory.appendingPathComponent("ca.fifo").path, 0o600) == 0 else {
                throw CocoaError(.fileWriteUnknown)
            }
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    /// The issue lines for `yaml` read with the real file system. The pipe wait is long: a named pipe that is waited
    /// for (rather than refused at once) shows as a test that takes a minute and fails on its message.
    func issues(_ yaml: String) -> [String] {
        let files = LocalFileSystem(pipeWait: .seconds(1))
        switch ConfigLoader.parse(
            text: yaml, path: "bridge.yaml", environment: [:], sinkTypes: SinkCatalog.configTypes, files: files)
        {
        case .success: return ["<valid>"]
        case .failure(let error): return error.issues.map(\.description)
        }
    }

    func directusCA(_ path: String) -> String {
        minimalYAML.replacingOnce("  auth:\n", with: "  tls:\n    ca_file: \"\(path)\"\n  auth:\n")
    }

    func jetstream(_ lines: [String]) -> String {
        let entry = (["- type: jetstream", "  servers: [\"tls://127.0.0.1:4222\"]"] + lines).map { "  \($0)\n" }
        return minimalYAML.replacingOnce("  - type: ndjson\n", with: entry.joined())
    }

    func kafka(_ properties: [String: String]) -> String {
        let lines = ["- type: kafka", "  brokers: [\"127.0.0.1:9093\"]", "  properties:"]
            + properties.keys.sorted().map { "    \($0): \"\(properties[$0] ?? "")\"" }
        return minimalYAML.replacingOnce("  - type: ndjson\n", with: lines.map { "  \($0)\n" }.joined())
    }

    @Test func directusCAFileMustBeARegularFile() throws {
        let files = try Files()
        defer { files.remove() }
        #expect(issues(directusCA(files.pem)) == ["<valid>"])
        #expect(
            issues(directusCA(files.fifo)) == [
                "bridge.yaml:4:14: directus.tls.ca_file: cannot read \"\(files.fifo)\": is a named pipe, not a "
                    + "regular file (the library that uses it opens the path again)"
            ])
        #expect(
            issues(directusCA("/dev/null")) == [
                "bridge.yaml:4:14: directus.tls.ca_file: cannot read \"/dev/null\": is a device, not a regular file "
                    + "(the library that uses it opens the path again)"
            ])
        #expect(
            issues(directusCA(files.subdirectory)) == [
                "bridge.yaml:4:14: directus.tls.ca_file: cannot read \"\(files.subdirectory)\": is a directory"
            ])
        #expect(
            issues(directusCA(files.missing)) == [
                "bridge.yaml:4:14: directus.tls.ca_file: cannot read \"\(files.missing)\": No such file or directory"
            ])
    }

    @Test func jetStreamCAAndCredentialsFilesMustBeRegularFiles() throws {
        let files = try Files()
        defer { files.remove() }
        #expect(issues(jetstream(["  ca_file: \"\(files.pem)\""])) == ["<valid>"])
        #expect(issues(jetstream(["  credentials_file: \"\(files.pem)\""])) == ["<valid>"])
        let fifoCA = issues(jetstream(["  ca_file: \"\(files.fifo)\""]))
        #expect(
            fifoCA == [
                "bridge.yaml:10:14: sinks[0].ca_file: cannot read \"\(files.fifo)\": is a named pipe, not a regular "
                    + "file (the library that uses it opens the path again)"
            ], "\(fifoCA)")
        let fifoCredentials = issues(jetstream(["  credentials_file: \"\(files.fifo)\""]))
        #expect(
            fifoCredentials == [
                "bridge.yaml:10:23: sinks[0].credentials_file: cannot read \"\(files.fifo)\": is a named pipe, not a "
                    + "regular file (the library that uses it opens the path again)"
            ], "\(fifoCredentials)")
        let device = issues(jetstream(["  credentials_file: /dev/zero"]))
        #expect(device.count == 1 && device[0].contains("\"/dev/zero\": is a device, not a regular file"), "\(device)")
        // libnats reads its CA bundle as PEM; one without a single `-----BEGIN` line fails only at connect.
        let notPEM = issues(jetstream(["  ca_file: \"\(files.binary)\""]))
        #expect(
            notPEM == ["bridge.yaml:10:14: sinks[0].ca_file: \"\(files.binary)\" holds no PEM certificate"], "\(notPEM)")
    }

    @Test func kafkaFilePropertiesMustBeRegularFiles() throws {
        let files = try Files()
        defer { files.remove() }
        for name in ["ssl.ca.location", "ssl.certificate.location", "ssl.key.location", "ssl.crl.location",
                     "ssl.keystore.location", "sasl.kerberos.keytab"]
        {
            let fifo = issues(kafka([name: files.fifo]))
            #expect(
                fifo == [
                    "bridge.yaml:11:\(9 + name.count): sinks[0].properties.\(name): cannot read \"\(files.fifo)\": is "
                        + "a named pipe, not a regular file (the library that uses it opens the path again)"
                ], "\(name): \(fifo)")
            let missing = issues(kafka([name: files.missing]))
            #expect(
                missing == [
                    "bridge.yaml:11:\(9 + name.count): sinks[0].properties.\(name): cannot read \"\(files.missing)\": "
                        + "No such file or directory"
                ], "\(name): \(missing)")
            let device = issues(kafka([name: "/dev/null"]))
            #expect(device.count == 1 && device[0].contains("is a device, not a regular file"), "\(name): \(device)")
        }
        // PEM files hold at least one `-----BEGIN` line; the keystore (PKCS#12) and the keytab are binary.
        for name in ["ssl.ca.location", "ssl.certificate.location", "ssl.key.location", "ssl.crl.location"] {
            #expect(issues(kafka([name: files.pem])) == ["<valid>"], "\(name)")
            let binary = issues(kafka([name: files.binary]))
            #expect(binary.count == 1 && binary[0].contains("\"\(files.binary)\" holds no PEM"), "\(name): \(binary)")
        }
        for name in ["ssl.keystore.location", "sasl.kerberos.keytab"] {
            #expect(issues(kafka([name: files.binary])) == ["<valid>"], "\(name)")
            let directory = issues(kafka([name: files.subdirectory]))
            #expect(directory.count == 1 && directory[0].hasSuffix(": is a directory"), "\(name): \(directory)")
        }
    }

    /// librdkafka takes a directory of hashed certificates or `probe` (look in the system's usual places) as its CA
    /// location; an empty value leaves the setting unset.
    @Test func kafkaCALocationMayBeADirectoryOrProbe() throws {
        let files = try Files()
        defer { files.remove() }
        #expect(issues(kafka(["ssl.ca.location": files.subdirectory])) == ["<valid>"])
        #expect(issues(kafka(["ssl.ca.location": "probe"])) == ["<valid>"])
        #expect(issues(kafka(["ssl.ca.location": ""])) == ["<valid>"])
    }

    /// Only the properties librdkafka documents as file paths are looked at: values of others that look like paths
    /// (a principal, a cipher list) are librdkafka's business.
    @Test func otherKafkaPropertiesAreNotTakenForPaths() throws {
        let files = try Files()
        defer { files.remove() }
        #expect(
            issues(
                kafka([
                    "sasl.kerberos.principal": "/no/such/file", "ssl.cipher.suites": files.missing,
                    "ssl.key.password": files.fifo, "ssl.endpoint.identification.algorithm": "none",
                ])) == ["<valid>"])
    }
}
