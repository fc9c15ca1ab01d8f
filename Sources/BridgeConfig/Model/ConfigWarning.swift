/// Something a configuration allows but its operator should know about (a webhook that is not signed): `validate`
/// prints it on stderr and `check` as a warning line; neither fails for it.
public struct ConfigWarning: Sendable, Equatable {
    /// Where it is: `sinks[1]`.
    public var field: String
    /// What deserves attention.
    public var detail: String
    /// What to do about it.
    public var remedy: String

    /// Creates a warning.
    public init(field: String, detail: String, remedy: String) {
        self.field = field
        self.detail = detail
        self.remedy = remedy
    }
}
