/// Reads `bridge.yaml` into a validated `BridgeConfig`, or every problem with its position.
///
/// Purely functional apart from reading files through the injected `ConfigFileSystem`: no globals, no process
/// environment (the caller passes it), no printing.
public enum ConfigLoader {
    /// Reads and parses the file at `path` (relative to the working directory). `path` appears in the issues
    /// exactly as given. `sinkTypes` are the sink types an entry of `sinks` may have (`SinkCatalog`); `scope` is what
    /// the command reads; `settings` (`--set`) win over the file and the environment.
    public static func load(
        path: String,
        environment: [String: String],
        settings: [ConfigSetting] = [],
        sinkTypes: [SinkConfigType],
        files: any ConfigFileSystem = LocalFileSystem(),
        scope: ConfigScope = .everything
    ) -> Result<BridgeConfig, ConfigError> {
        switch files.readFile(atPath: path) {
        case .success(let bytes):
            return parse(
                bytes: bytes, path: path, environment: environment, settings: settings, sinkTypes: sinkTypes,
                files: files, scope: scope)
        case .failure(.missing) where !overrides(environment, settings).isEmpty:
            // No file, but DIRECTUS_BRIDGE__… variables or --set: they alone are the configuration (containers).
            return decode(
                root: nil, yamlIssues: [], path: path, overrides: overrides(environment, settings),
                sinkTypes: sinkTypes, files: files, scope: scope)
        case .failure(let problem):
            let issue = ConfigIssue(path: path, at: .start, "cannot read the configuration file: \(problem.reason)")
            return .failure(ConfigError(issues: [issue]))
        }
    }

    /// Parses configuration `text`; `path` names it in issues (and is not read).
    public static func parse(
        text: String,
        path: String,
        environment: [String: String],
        settings: [ConfigSetting] = [],
        sinkTypes: [SinkConfigType],
        files: any ConfigFileSystem = LocalFileSystem(),
        scope: ConfigScope = .everything
    ) -> Result<BridgeConfig, ConfigError> {
        parse(
            bytes: Array(text.utf8), path: path, environment: environment, settings: settings, sinkTypes: sinkTypes,
            files: files, scope: scope)
    }

    /// Parses configuration `bytes` (UTF-8, an optional byte-order mark is skipped).
    public static func parse(
        bytes: [UInt8],
        path: String,
        environment: [String: String],
        settings: [ConfigSetting] = [],
        sinkTypes: [SinkConfigType],
        files: any ConfigFileSystem = LocalFileSystem(),
        scope: ConfigScope = .everything
    ) -> Result<BridgeConfig, ConfigError> {
        func fail(_ message: String, at mark: SourceMark = .start) -> Result<BridgeConfig, ConfigError> {
            .failure(ConfigError(issues: [ConfigIssue(path: path, at: mark, message)]))
        }
        var bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        if let mark = SourceText.firstInvalidUTF8(in: bytes) {
            return fail("the configuration file is not valid UTF-8 text", at: mark)
        }
        let text = String(decoding: bytes, as: UTF8.self)
        let source = SourceText(text)
        let (root, yamlIssues) = YAMLTreeBuilder.build(
            bytes: bytes,
            source: source,
            path: path,
            environment: environment
        )
        guard let root else {
            if !yamlIssues.isEmpty { return .failure(ConfigError(issues: ordered(yamlIssues))) }
            return fail("the configuration file is empty")
        }
        if let scalar = root.scalar, YAMLCoreSchema.resolve(scalar) == .null, !scalar.alreadyReported {
            return fail("the configuration file is empty")
        }
        return decode(
            root: root, yamlIssues: yamlIssues, path: path, overrides: overrides(environment, settings),
            sinkTypes: sinkTypes, files: files, scope: scope)
    }

    /// The environment's `DIRECTUS_BRIDGE__…` values, then the `--set` ones (applied in this order: the last wins).
    private static func overrides(_ environment: [String: String], _ settings: [ConfigSetting])
        -> [EnvironmentOverrides.Override]
    {
        EnvironmentOverrides.overrides(in: environment) + EnvironmentOverrides.inApplyingOrder(settings.map(\.override))
    }

    /// Decodes `root` (nil: no file) with `overrides` applied over it.
    private static func decode(
        root: YAMLNode?, yamlIssues: [ConfigIssue], path: String, overrides: [EnvironmentOverrides.Override],
        sinkTypes: [SinkConfigType], files: any ConfigFileSystem, scope: ConfigScope
    ) -> Result<BridgeConfig, ConfigError> {
        let (tree, overrideIssues) = EnvironmentOverrides.apply(overrides, to: root)
        // A value an override replaced is never read: its undefined ${NAME} is no problem (an aliased copy of it that
        // stays in the tree still is).
        let replaced = root?.undefinedVariableIssues ?? []
        let remaining = tree.undefinedVariableIssues
        let yamlIssues = yamlIssues.filter { !replaced.contains($0) || remaining.contains($0) }
        var decoder = ConfigDecoder(path: path, files: files, sinkTypes: sinkTypes, scope: scope)
        let config = decoder.decodeConfig(tree)
        let issues = ordered(overrideIssues + scope.relevant(yamlIssues, root: tree) + decoder.issues)
        guard issues.isEmpty, let config else {
            precondition(!issues.isEmpty, "a configuration that failed to decode must have reported why")
            return .failure(ConfigError(issues: issues))
        }
        return .success(config)
    }

    /// Issues by position, duplicates removed (a problem inside an aliased node is found once per use).
    private static func ordered(_ issues: [ConfigIssue]) -> [ConfigIssue] {
        var unique: [ConfigIssue] = []
        for issue in issues where !unique.contains(issue) { unique.append(issue) }
        return unique.enumerated().sorted {
            ($0.element.line, $0.element.column, $0.offset) < ($1.element.line, $1.element.column, $1.offset)
        }.map(\.element)
    }
}
