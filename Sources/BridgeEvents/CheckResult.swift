/// One line of `directus-bridge check` (README.md "Check the setup").
public struct CheckResult: Sendable, Equatable {
    /// How the check came out.
    public enum Status: Sendable, Equatable {
        /// Passed.
        case ok
        /// Passed, but something deserves attention (e.g. `auto` mode falling back to live mode).
        case warning
        /// Failed: `check` exits 1.
        case fail
    }

    /// The outcome.
    public var status: Status
    /// What was checked: `server`, `credentials`, `collection articles`, `webhook https://…`.
    public var check: String
    /// What was found.
    public var detail: String
    /// What to do about it (failures and warnings).
    public var remedy: String?

    /// Creates a result.
    public init(_ status: Status, _ check: String, _ detail: String, remedy: String? = nil) {
        self.status = status
        self.check = check
        self.detail = detail
        self.remedy = remedy
    }

    /// A passed check.
    public static func ok(_ check: String, _ detail: String) -> CheckResult { CheckResult(.ok, check, detail) }

    /// A passed check with a warning and what to do about it.
    public static func warning(_ check: String, _ detail: String, remedy: String) -> CheckResult {
        CheckResult(.warning, check, detail, remedy: remedy)
    }

    /// A failed check and what to do about it.
    public static func fail(_ check: String, _ detail: String, remedy: String) -> CheckResult {
        CheckResult(.fail, check, detail, remedy: remedy)
    }

    /// Whether the check passed (warnings pass).
    public var passed: Bool { status != .fail }

    /// `ok   <check>: <detail>`, `ok   <check>: warning: <detail> — <remedy>` or
    /// `FAIL <check>: <detail> — <remedy>`.
    public var line: String {
        switch status {
        case .ok: "ok   \(check): \(detail)"
        case .warning: "ok   \(check): warning: \(detail)" + (remedy.map { " — \($0)" } ?? "")
        case .fail: "FAIL \(check): \(detail) — \(remedy ?? "see the log on stderr")"
        }
    }
}
