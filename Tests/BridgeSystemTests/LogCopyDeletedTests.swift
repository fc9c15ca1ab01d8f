import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeSystem

/// The JSON log copy (`DIRECTUS_BRIDGE_JSON_LOG_FILE`) deleted while the bridge runs (`rm`, not a rotation, no
/// SIGHUP). Before: every later line went into the deleted file, where no log shipper could read it, until the next
/// SIGHUP (docs/RELIABILITY.md, "Careless or hostile operators").
@Suite struct LogCopyDeletedTests {
    @Test func aLineAfterTheCopyWasDeletedGoesToANewPrivateFileAtThePath() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "log-copy-deleted").path
        let path = directory + "/copy.json"
        let copy = try LogCopyFile(path: path, hangUps: HangUpCount())
        #expect(copy.append(Array("{\"n\":1}\n".utf8)) == nil)
        try FileManager.default.removeItem(atPath: path)
        #expect(copy.append(Array("{\"n\":2}\n".utf8)) == nil)
        #expect(copy.append(Array("{\"n\":3}\n".utf8)) == nil)
        #expect((try? String(contentsOfFile: path, encoding: .utf8)) == "{\"n\":2}\n{\"n\":3}\n")
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int ?? -1) & 0o777 == 0o600)
    }

    @Test func aDeletedCopyThatCannotBeMadeAgainIsSaidOnceAndTriedAgain() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "log-copy-deleted").path
        let inner = directory + "/logs"
        try FileManager.default.createDirectory(atPath: inner, withIntermediateDirectories: false)
        let path = inner + "/copy.json"
        let copy = try LogCopyFile(path: path, hangUps: HangUpCount())
        try FileManager.default.removeItem(atPath: inner)
        #expect(copy.append(Array("{\"n\":1}\n".utf8)) != nil)
        #expect(copy.append(Array("{\"n\":2}\n".utf8)) == nil)
        try FileManager.default.createDirectory(atPath: inner, withIntermediateDirectories: false)
        #expect(copy.append(Array("{\"n\":3}\n".utf8)) == nil)
        #expect((try? String(contentsOfFile: path, encoding: .utf8)) == "{\"n\":3}\n")
    }
}
