/// What `--version` prints and the `user-agent` carries.
public enum Version {
    /// The package version (the VERSION file).
    public static var number: String { BuildInfo.version }
    /// The git commit the binary was built from (`-dirty` when the tree had changes).
    public static var commit: String { BuildInfo.commit }
    /// `directus-bridge 0.1.0 (commit abc123)`.
    public static var line: String { "directus-bridge \(number) (commit \(commit))" }
    /// `directus-bridge/0.1.0`, the HTTP user agent.
    public static var userAgent: String { "directus-bridge/\(number)" }
}
