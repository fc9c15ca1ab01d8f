import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

/// `PrivateFile.open` and `OwnedPath`: the bridge never writes through a file or directory another local user
/// controls (docs/RELIABILITY.md, "Files another user controls").
///
/// "Another user": as root the tests give files to `nobody` (`OtherUser`) and check with the process's own trust; not
/// as root they cannot, and check instead with a trust in a uid that is not theirs (`PathTrust(user:)`), which sees
/// the test's own files as another user's — the same code path, the same refusal.
@Suite struct OwnedPathTests {
    private func directory(_ prefix: String) throws -> String {
        try TestEnvironment.makeTemporaryDirectory(prefix: prefix).path
    }

    /// Makes `path` (a link itself, not its target) another user's; returns the trust to check with and that user.
    private func makeForeign(_ path: String) throws -> (trust: PathTrust, owner: UInt32) {
        if OtherUser.isAvailable {
            try OtherUser.give(path)
            return (.current, OtherUser.uid)
        }
        return (PathTrust(user: geteuid() &+ 1), geteuid())
    }

    /// The refusal `body` ends in; an issue is recorded when it ends otherwise.
    private func refusal(
        sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
    ) -> UnsafePathError? {
        #expect(throws: UnsafePathError.self, sourceLocation: sourceLocation, performing: body)
    }

    private func victim(in base: String) throws -> String {
        let path = base + "/victim"
        try "secret\n".write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    private func content(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    // MARK: - PrivateFile.open

    @Test func aLinkInPlaceOfTheFileIsNeverFollowed() throws {
        let base = try directory("owned-link")
        let victim = try victim(in: base)
        let link = base + "/bridge.lock"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: victim)
        let own = refusal { _ = try PrivateFile.open(link, flags: O_RDWR) }
        #expect(own?.problem == .symbolicLink)
        #expect(own?.description.hasPrefix("\(link) is a symbolic link") == true, "\(String(describing: own))")

        let (trust, owner) = try makeForeign(link)
        let foreign = refusal { _ = try PrivateFile.open(link, flags: O_RDWR, trust: trust) }
        #expect(foreign?.problem == .linkOwnedByAnotherUser(owner))
        #expect(content(victim) == "secret\n")
        // A dangling link too: creating the file would have created it wherever the link points.
        let dangling = base + "/out.ndjson"
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: base + "/elsewhere")
        #expect(refusal { _ = try PrivateFile.open(dangling, flags: O_WRONLY | O_APPEND) }?.problem == .symbolicLink)
        #expect(!FileManager.default.fileExists(atPath: base + "/elsewhere"))
    }

    @Test func aFileOfAnotherUserIsRefusedUnwritten() throws {
        let base = try directory("owned-foreign")
        let file = base + "/out.ndjson"
        #expect(FileManager.default.createFile(atPath: file, contents: nil))
        let (trust, owner) = try makeForeign(file)
        let error = refusal { _ = try PrivateFile.open(file, flags: O_WRONLY | O_APPEND, trust: trust) }
        #expect(error?.problem == .ownedByAnotherUser(owner))
        #expect(error?.description.contains("is owned by uid \(owner)") == true, "\(String(describing: error))")
        #expect(error?.isRetriable == false)
        #expect(content(file) == "")
    }

    @Test func aFileWithAnotherNameIsRefused() throws {
        let base = try directory("owned-hardlink")
        let file = base + "/webhooks.db"
        #expect(FileManager.default.createFile(atPath: file, contents: nil))
        #expect(link(file, base + "/elsewhere") == 0)
        #expect(refusal { try PrivateFile.create(file) }?.problem == .hardLinked(count: 2))
    }

    @Test func onlyTheKindsAskedForAreOpened() throws {
        let base = try directory("owned-kinds")
        let pipe = base + "/pipe"
        #expect(mkfifo(pipe, 0o600) == 0)
        // O_RDWR opens a named pipe without waiting for the other end.
        #expect(refusal { _ = try PrivateFile.open(pipe, flags: O_RDWR) }?.problem == .unexpectedKind(.namedPipe))
        let descriptor = try PrivateFile.open(pipe, flags: O_RDWR, kinds: [.namedPipe])
        close(descriptor)
        let device = try PrivateFile.open("/dev/null", flags: O_WRONLY, kinds: [.device])  // root's: trusted
        close(device)
    }

    @Test func aNewFileIsCreatedByTheBridgeItself() throws {
        let base = try directory("owned-new")
        let file = base + "/cursor.db"
        let descriptor = try PrivateFile.open(file, flags: O_RDWR)
        var status = stat()
        #expect(fstat(descriptor, &status) == 0)
        close(descriptor)
        #expect(status.st_uid == geteuid())
        #expect(status.st_mode & 0o777 == 0o600)
        #expect(status.st_nlink == 1)
    }

    // MARK: - Directories

    @Test(arguments: [0o770, 0o720, 0o707, 0o1777, 0o2775])
    func aStateDirectoryOthersMayWriteIsRefused(mode: Int) throws {
        let state = try directory("owned-state")
        try OtherUser.setMode(state, mode_t(mode))
        let error = refusal { try OwnedPath.checkDirectory(state, rule: .privateDirectory) }
        #expect(error?.problem == .writableByGroupOrOthers(mode: UInt32(mode)))
        #expect(error?.path == state)
    }

    @Test(arguments: [0o700, 0o750, 0o755, 0o711])
    func aStateDirectoryOnlyItsOwnerMayWriteIsAccepted(mode: Int) throws {
        let state = try directory("owned-state")
        try OtherUser.setMode(state, mode_t(mode))
        try OwnedPath.checkDirectory(state, rule: .privateDirectory)
    }

    @Test func anOutputDirectoryMayBeSharedOnlyWithTheStickyBit() throws {
        let open = try directory("owned-output")
        try OtherUser.setMode(open, 0o777)
        let error = refusal { _ = try OwnedPath.resolveFile(open + "/out.ndjson") }
        #expect(error?.problem == .writableByOthers(mode: 0o777))
        #expect(error?.description.hasPrefix("\(open)/out.ndjson: \(open) is writable by others") == true)
        try OtherUser.setMode(open, 0o1777)  // as /tmp
        #expect(try OwnedPath.resolveFile(open + "/out.ndjson") == open + "/out.ndjson")
        try OtherUser.setMode(open, 0o775)  // a group's: the operator's choice
        #expect(try OwnedPath.resolveFile(open + "/out.ndjson") == open + "/out.ndjson")
    }

    /// A directory of another user anywhere on the way: they could rename what lies below it and put their own.
    @Test func aDirectoryOfAnotherUserOnTheWayIsRefused() throws {
        let base = try directory("owned-parents")
        let theirs = base + "/theirs"
        try FileManager.default.createDirectory(atPath: theirs + "/state", withIntermediateDirectories: true)
        try OtherUser.setMode(theirs + "/state", 0o700)
        let (trust, owner) = try makeForeign(theirs)
        let error = refusal { try OwnedPath.checkDirectory(theirs + "/state", rule: .privateDirectory, trust: trust) }
        #expect(error?.problem == .ownedByAnotherUser(owner))
        #expect(error.map { (theirs + "/state").hasPrefix($0.path) } == true, "\(String(describing: error))")
        #expect(error?.subject == theirs + "/state")
        // Missing still, it would be created in their directory: refused before anything is made.
        let missing = refusal {
            try OwnedPath.checkDirectory(theirs + "/new", rule: .privateDirectory, allowMissing: true, trust: trust)
        }
        #expect(missing?.problem == .ownedByAnotherUser(owner))
        #expect(throws: SystemError.self) { try OwnedPath.checkDirectory(base + "/none", rule: .privateDirectory) }
        try OwnedPath.checkDirectory(base + "/none/deeper", rule: .privateDirectory, allowMissing: true)
    }

    /// A link on the way is followed when the bridge's user or root owns it (a `state_dir` that is a link of its
    /// own), and the directory it leads to is checked; another user's is refused, wherever it points.
    @Test func linksOnTheWayAreFollowedOnlyWhenTrusted() throws {
        let base = try directory("owned-links")
        let real = base + "/real"
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: false)
        try OtherUser.setMode(real, 0o700)
        let link = base + "/state"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "real")
        try OwnedPath.checkDirectory(link, rule: .privateDirectory)
        #expect(try OwnedPath.resolveFile(link + "/../state/out.ndjson") == real + "/out.ndjson")
        try OtherUser.setMode(real, 0o770)
        let loose = refusal { try OwnedPath.checkDirectory(link, rule: .privateDirectory) }
        #expect(loose?.problem == .writableByGroupOrOthers(mode: 0o770))
        #expect(loose?.description.hasPrefix("\(link): \(real) is writable") == true, "\(String(describing: loose))")

        try OtherUser.setMode(real, 0o700)
        let (trust, owner) = try makeForeign(link)
        let error = refusal { try OwnedPath.checkDirectory(link, rule: .privateDirectory, trust: trust) }
        #expect(error?.problem == .linkOwnedByAnotherUser(owner))
        #expect(error?.path == link)
    }

    @Test func theFilesBesideADatabaseAreCheckedWithoutOpeningThem() throws {
        let base = try directory("owned-companions")
        try OwnedPath.checkExistingFile(base + "/webhooks.db-wal")  // missing: SQLite creates it
        let pipe = base + "/webhooks.db-shm"
        #expect(mkfifo(pipe, 0o600) == 0)
        #expect(refusal { try OwnedPath.checkExistingFile(pipe) }?.problem == .unexpectedKind(.namedPipe))
        let log = base + "/webhooks.db-journal"
        try FileManager.default.createSymbolicLink(atPath: log, withDestinationPath: try victim(in: base))
        #expect(refusal { try OwnedPath.checkExistingFile(log) }?.problem == .symbolicLink)
        let wal = base + "/cursor.db-wal"
        #expect(FileManager.default.createFile(atPath: wal, contents: nil))
        try OwnedPath.checkExistingFile(wal)
        let (trust, owner) = try makeForeign(wal)
        #expect(refusal { try OwnedPath.checkExistingFile(wal, trust: trust) }?.problem == .ownedByAnotherUser(owner))
    }
}
