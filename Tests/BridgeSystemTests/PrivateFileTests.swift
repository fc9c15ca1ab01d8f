import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

/// Files and directories the bridge creates are private (docs/RELIABILITY.md, "Files and transport").
@Suite struct PrivateFileTests {
    private func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? Int ?? -1) & 0o777
    }

    @Test func aCreatedFileIs0600AndAnExistingOneKeepsItsMode() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "private-file").path
        let created = directory + "/new.ndjson"
        let descriptor = try PrivateFile.open(created, flags: O_WRONLY | O_APPEND)
        close(descriptor)
        #expect(try mode(created) == 0o600)
        #expect(PrivateFile.looseMode(created) == nil)

        let existing = directory + "/existing.ndjson"
        #expect(FileManager.default.createFile(atPath: existing, contents: Data("x\n".utf8)))
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: existing)
        let reopened = try PrivateFile.open(existing, flags: O_WRONLY | O_APPEND)
        close(reopened)
        #expect(try mode(existing) == 0o640)
        #expect(PrivateFile.looseMode(existing) == 0o640)
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "x\n")  // not truncated
    }

    @Test func createdDirectoriesAre0700AndExistingOnesAreLeftAlone() throws {
        let base = try TestEnvironment.makeTemporaryDirectory(prefix: "private-dir").path
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: base)
        let nested = base + "/state/deeper"
        try PrivateFile.createDirectory(nested)
        #expect(try mode(base + "/state") == 0o700)
        #expect(try mode(nested) == 0o700)
        #expect(try mode(base) == 0o755)
        try PrivateFile.createDirectory(nested)  // existing: fine
        #expect(PrivateFile.looseMode(base) == 0o755)
        #expect(PrivateFile.looseMode(base + "/missing") == nil)
    }

    @Test func failuresAreTypedErrors() throws {
        let base = try TestEnvironment.makeTemporaryDirectory(prefix: "private-fail").path
        let file = base + "/a-file"
        try PrivateFile.create(file)
        #expect(throws: SystemError.self) { try PrivateFile.createDirectory(file + "/below") }
        #expect(throws: SystemError.self) { try PrivateFile.create(base + "/missing/dir/file") }
    }
}

@Suite struct LoopbackHostTests {
    @Test(arguments: [
        "127.0.0.1", "127.1.2.3", "127.255.255.255", "::1", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1", "localhost",
        "LOCALHOST", "localhost.",
    ])
    func loopbackHosts(host: String) {
        #expect(SocketAddress.isLoopback(host: host))
    }

    @Test(arguments: [
        "128.0.0.1", "10.0.0.1", "0.0.0.0", "::", "::2", "::ffff:10.0.0.1", "example.com", "localhost.example.com",
        "127.0.0.1.nip.io", "", "[::1]", "fe80::1",
    ])
    func otherHosts(host: String) {
        #expect(!SocketAddress.isLoopback(host: host))
    }
}
