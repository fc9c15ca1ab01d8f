import BridgeConfig
import BridgeSystem

/// The stderr log handler of the commands that log (`run`, `check`), with the JSON copy that
/// `DIRECTUS_BRIDGE_JSON_LOG_FILE` asks for (docs/configuration.md "Log fields").
enum LogHandlerFactory {
    /// The environment variable naming the file that gets every log line as JSON.
    static let jsonCopyVariable = "DIRECTUS_BRIDGE_JSON_LOG_FILE"

    /// The handler for `config`, or nil after printing why the JSON copy cannot be opened (a configuration error).
    static func make(_ config: BridgeConfig) -> StderrLogHandler? {
        var copy: LogCopyFile?
        if let path = ProcessEnvironment.current()[jsonCopyVariable], !path.isEmpty {
            do {
                copy = try LogCopyFile(path: path)
            } catch {
                BridgeApplication.printError("directus-bridge: \(jsonCopyVariable): \(error)")
                return nil
            }
        }
        return StderrLogHandler(
            level: config.log.level,
            format: config.log.format,
            secrets: config.allSecrets,
            jsonCopy: copy
        )
    }
}
