import BridgeConfig
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeApp

/// packaging/completion/ (bash and zsh, installed by the .deb) is written by hand; these tests keep it in step with
/// the program: every command, every option of each (`CommandSpec`) and every value of `--log-level` and
/// `--log-format` is offered, and bash completes as a user would type.
@Suite struct ShellCompletionTests {
    static let scripts = ["directus-bridge.bash", "_directus-bridge"]

    static func script(_ name: String) -> String {
        let url = TestEnvironment.repositoryRoot.appendingPathComponent("packaging/completion/\(name)")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }

    @Test(arguments: scripts)
    func everyCommandOptionAndValueIsOffered(script name: String) {
        let text = Self.script(name)
        let words = Set(text.split(whereSeparator: { !($0.isLetter || $0 == "-") }).map(String.init))
        for spec in CommandSpec.all {
            for word in spec.name.split(separator: " ") { #expect(words.contains(String(word)), "\(name): \(word)") }
            for option in spec.options {
                #expect(words.contains(option.name), "\(name): \(spec.name) \(option.name)")
                if let alias = option.alias { #expect(words.contains(alias), "\(name): \(spec.name) \(alias)") }
            }
        }
        for value in LogConfig.levelNames + LogConfig.formatNames {
            #expect(words.contains(value), "\(name): \(value)")
        }
        #expect(words.isSuperset(of: ["--version", "--help"]))
    }

    /// What bash offers after `words` (the last one being completed).
    func bashCompletions(_ words: String) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        let path = TestEnvironment.repositoryRoot.appendingPathComponent("packaging/completion/directus-bridge.bash")
        process.arguments = [
            "-c",
            "source \"$0\"; read -ra COMP_WORDS <<<\"$1\"; [[ $1 == *' ' ]] && COMP_WORDS+=(''); "
                + "COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _directus_bridge; printf '%s\\n' \"${COMPREPLY[@]}\"",
            path.path, words,
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    @Test func bashCompletesCommandsOptionsAndValues() throws {
        #expect(try bashCompletions("directus-bridge st") == ["status"])
        #expect(try bashCompletions("directus-bridge dlq re") == ["replay"])
        #expect(try bashCompletions("directus-bridge dlq replay --s") == ["--set", "--since", "--sink"])
        #expect(try bashCompletions("directus-bridge resync articles --s") == ["--set", "--sink"])
        #expect(try bashCompletions("directus-bridge run --log-format ") == ["text", "json"])
        #expect(
            try bashCompletions("directus-bridge check --") == [
                "--config", "--set", "--send-test-event", "--json", "--help",
            ])
        #expect(try bashCompletions("directus-bridge validate --set ").isEmpty)
        #expect(try bashCompletions("directus-bridge dlq list --id ").isEmpty)
    }
}
