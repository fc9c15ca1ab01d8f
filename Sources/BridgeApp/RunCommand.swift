import BridgeConfig
import BridgeCore
import BridgeEvents
import BridgeDirectus
import BridgeActivity
import BridgeSinks
import BridgeSystem

/// `run`: the service; `--log-level`/`--log-format` (`log`) win over the file's `log`.
enum RunCommand {
    static func run(configPath: ConfigSource, log: LogOverrides) async -> ExitCode {
        guard var config = BridgeApplication.loadConfig(path: configPath) else { return .configuration }
        config.log = log.applied(to: config.log)
        guard let handler = LogHandlerFactory.make(config) else { return .configuration }
        let logger = Logger(label: "bridge", handler: handler)
        let runtime = BridgeRuntime(
            config: config, version: Version.number, commit: Version.commit, logHandler: handler, logger: logger)
        switch await runtime.run() {
        case .cleanShutdown: return .success
        case .credentialsRejected: return .credentialsRejected
        case .configurationProblem(let message):
            // Secrets hidden as in the log (a library's refusal may quote a configured value).
            let redactor = Redactor(secrets: config.allSecrets)
            BridgeApplication.printError("directus-bridge: " + redactor.redact(message))
            return .configuration
        case .failure: return .failure
        }
    }
}
