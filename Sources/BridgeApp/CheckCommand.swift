import BridgeConfig
import BridgeCore
import BridgeEvents
import BridgeJSON
import BridgeSystem

/// `check`: live checks against Directus, the sinks and the shared state. One line per check on stdout (the command's
/// answer), or with `--json` one object once every check ran; logs on stderr. Exit 0 when every check passed, 1
/// otherwise, 78 when the config does not load.
enum CheckCommand {
    static func run(configPath: ConfigSource, sendTestEvent: Bool, json: Bool) async -> ExitCode {
        guard let config = BridgeApplication.loadConfig(path: configPath) else { return .configuration }
        ignoreSIGPIPE()
        guard let handler = LogHandlerFactory.make(config) else { return .configuration }
        let logger = Logger(label: "check", handler: handler)
        let check = BridgeCheck(
            config: config,
            userAgent: Version.userAgent,
            sendTestEvent: sendTestEvent,
            logHandler: handler,
            logger: logger
        )
        var results: [CheckResult] = []
        let passed = await check.run { result in
            if json {
                results.append(result)
            } else {
                BridgeApplication.printOutput(result.line)
            }
        }
        if json { BridgeApplication.printOutput(document(results, passed: passed).serializedString()) }
        return passed ? .success : .failure
    }

    /// `{"ok": …, "checks": [{"name", "ok", "status", "detail", "remedy"}…]}` (README.md, "check --json"): `ok` is
    /// false only for a failed check (a warning passes), `status` tells the three apart, `remedy` is null for `ok`.
    static func document(_ results: [CheckResult], passed: Bool) -> JSONValue {
        let checks = results.map { result -> JSONValue in
            let status: JSONValue =
                switch result.status {
                case .ok: "ok"
                case .warning: "warning"
                case .fail: "fail"
                }
            return [
                "name": .string(result.check), "ok": .bool(result.passed), "status": status,
                "detail": .string(result.detail), "remedy": result.remedy.map(JSONValue.string) ?? .null,
            ]
        }
        return ["ok": .bool(passed), "checks": .array(checks)]
    }
}
