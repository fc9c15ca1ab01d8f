import BridgeConfig
import BridgeCore
import BridgeEvents
import BridgeDirectus
import BridgeActivity
import BridgeSinks
import BridgeSystem

/// `run`: the service; `--log-level`/`--log-format` (`log`) win over the file's `log`.
enum RunCommand {
    static func run(configPath: String, log: LogOverrides) async -> ExitCode {
        guard var config = BridgeApplication.loadConfig(path: configPath) else { return .configuration }
        config.log = log.applied(to: config.log)
        let handler = StderrLogHandler(level: config.log.level, format: config.log.format, secrets: config.allSecrets)
        let logger = Logger(label: "bridge", handler: handler)
        let runtime = BridgeRuntime(
            config: config, version: Version.number, commit: Version.commit, logHandler: handler, logger: logger)
        switch await runtime.run() {
        case .cleanShutdown: return .success
        case .credentialsRejected: return .credentialsRejected
        case .configurationProblem(let message):
            BridgeApplication.printError("directus-bridge: \(message)")
            return .configuration
        case .failure: return .failure
        }
    }
}
