import BridgeConfig
import BridgeCore
import BridgeEvents
import BridgeDirectus
import BridgeActivity
import BridgeSinks
import BridgeSystem

/// `check`: live checks against Directus, the sinks and the shared state. One line per check on stdout (the command's
/// answer); logs on stderr. Exit 0 when every check passed, 1 otherwise, 78 when the config does not load.
enum CheckCommand {
    static func run(configPath: String, sendTestEvent: Bool) async -> ExitCode {
        guard let config = BridgeApplication.loadConfig(path: configPath) else { return .configuration }
        ignoreSIGPIPE()
        let handler = StderrLogHandler(level: config.log.level, format: config.log.format, secrets: config.allSecrets)
        let logger = Logger(label: "check", handler: handler)
        let check = BridgeCheck(
            config: config,
            userAgent: Version.userAgent,
            sendTestEvent: sendTestEvent,
            logHandler: handler,
            logger: logger
        )
        let passed = await check.run { result in BridgeApplication.printOutput(result.line) }
        return passed ? .success : .failure
    }
}
