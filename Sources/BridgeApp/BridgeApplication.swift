#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import BridgeConfig
import BridgeCore
import BridgeEvents
import BridgeDirectus
import BridgeActivity
import BridgeSinks
import BridgeSystem

/// The `directus-bridge` program: parses the command line and runs a command.
public enum BridgeApplication {
    /// Runs the command in `arguments` (without the program name) and returns the exit code.
    public static func main(arguments: [String]) async -> ExitCode {
        // Before any secret is read: no core file, no /proc/PID/mem or environ for other processes of the user.
        for failure in CoreDumpGuard.apply() { printError("directus-bridge: warning: \(failure)") }
        LargeAllocations.returnToSystemWhenFreed()
        let command: Command
        do {
            command = try CommandLineParser.parse(arguments)
        } catch {
            printError("directus-bridge: \(error.message)")
            return .usage
        }
        switch command {
        case .version:
            printOutput(Version.report)
            return .success
        case .help(let command):
            printOutput(command.map(CommandLineParser.helpText(for:)) ?? CommandLineParser.helpText)
            return .success
        case .validate(let path):
            return ValidateCommand.run(configPath: path)
        case .run(let path, let log):
            return await RunCommand.run(configPath: path, log: log)
        case .check(let path, let sendTestEvent, let json):
            return await CheckCommand.run(configPath: path, sendTestEvent: sendTestEvent, json: json)
        case .deadLetters(let command):
            return await DeadLetterCommandRunner.run(command)
        case .resync(let uid, let path, let sink):
            return await ResyncCommand.run(uid: uid, sink: sink, configPath: path)
        case .status(let path, let json):
            return await StatusCommand.run(configPath: path, json: json)
        }
    }

    /// Loads what `scope` covers of the config, or prints every issue (`PATH:LINE:COLUMN: message`) to stderr.
    static func loadConfig(path source: ConfigSource, scope: ConfigScope = .everything) -> BridgeConfig? {
        switch ConfigLoader.load(
            path: source.path, environment: ProcessEnvironment.current(), settings: source.settings,
            sinkTypes: SinkCatalog.configTypes, scope: scope)
        {
        case .success(let config):
            return config
        case .failure(let error):
            for issue in error.issues { printError(issue.description) }
            return nil
        }
    }

    /// Writes a line to stdout (data, or a command's answer).
    static func printOutput(_ text: String) {
        FileDescriptorWriter.writeAll(fd: 1, bytes: Array((text + "\n").utf8))
    }

    /// Writes a line to stderr: one line, however the text came (a message may quote a peer or the config file),
    /// its control characters turned into spaces and its length bounded (`PeerText`).
    static func printError(_ text: String) {
        FileDescriptorWriter.writeAll(fd: 2, bytes: Array((PeerText.sanitized(text, maximumLength: 8192) + "\n").utf8))
    }
}

/// `validate`: parse and check the config; no network. Prints `ok` or every issue; exits 0 or 78. Warnings
/// (`BridgeConfig.warnings`, and the transport risks of `TransportPolicy`) go to stderr beside the `ok` and do not
/// fail it.
enum ValidateCommand {
    static func run(configPath: ConfigSource) -> ExitCode {
        guard let config = BridgeApplication.loadConfig(path: configPath) else { return .configuration }
        for warning in config.warnings + TransportPolicy.risks(config).map(\.warning) {
            let text = "\(warning.field): \(warning.detail) — \(warning.remedy)"
            BridgeApplication.printError("\(configPath): warning: \(text)")
        }
        BridgeApplication.printOutput("ok")
        return .success
    }
}
