import BridgeConfig
import BridgeSinks
import Testing

/// `ConfigScope.withoutDirectus`, what `status`, `dlq` and `resync` load (docs/configuration.md, "What each command
/// reads"): the `directus` section is not read, so its undefined variables and unreadable files are no error; a
/// variable any other section uses still is, named at its reference. `everything` (run, validate, check) reports
/// them all, as before.
@Suite struct ConfigScopeTests {
    /// A file whose Directus URL, token and CA file come from the environment or a file that is not there, with
    /// `rest` appended (sinks, delivery).
    func yaml(rest: String = "sinks:\n  - type: ndjson\n") -> String {
        """
        directus:
          url: ${SCOPE_DIRECTUS_URL}
          auth:
            token_file: /etc/directus-bridge/token
          tls:
            ca_file: ${SCOPE_CA_FILE}
        subscriptions:
          - collection: articles
        \(rest)
        """
    }

    func load(_ yaml: String, scope: ConfigScope, environment: [String: String] = [:]) -> Result<
        BridgeConfig, ConfigError
    > {
        ConfigLoader.parse(
            text: yaml, path: "bridge.yaml", environment: environment, sinkTypes: SinkCatalog.configTypes,
            files: InMemoryFiles(), scope: scope)
    }

    func messages(_ result: Result<BridgeConfig, ConfigError>) -> [String] {
        guard case .failure(let error) = result else { return [] }
        return error.issues.map(\.description)
    }

    @Test func directusSettingsNeedNotResolveWithoutDirectus() throws {
        let config = try load(yaml(), scope: .withoutDirectus).get()
        #expect(config.directusSection == nil)
        #expect(config.subscriptions.map(\.collection) == ["articles"])
        #expect(config.sinks.map(\.type) == ["ndjson"])
        #expect(config.allSecrets.isEmpty)
        #expect(config.description.hasPrefix("# directus: not read"))
    }

    @Test func everythingStillReportsEachOne() {
        let lines = messages(load(yaml(), scope: .everything))
        #expect(
            lines.contains { $0.hasPrefix("bridge.yaml:2:8: undefined variable \"SCOPE_DIRECTUS_URL\"") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("bridge.yaml:6:14: undefined variable \"SCOPE_CA_FILE\"") }, "\(lines)")
        #expect(lines.contains { $0.contains("/etc/directus-bridge/token") }, "\(lines)")
    }

    @Test func aVariableAnotherSectionUsesIsNamed() {
        let rest = "delivery:\n  state_dir: ${SCOPE_STATE_DIR}\nsinks:\n  - type: ndjson\n"
        let lines = messages(load(yaml(rest: rest), scope: .withoutDirectus))
        #expect(lines.count == 1, "\(lines)")
        #expect(lines.first?.hasPrefix("bridge.yaml:10:14: undefined variable \"SCOPE_STATE_DIR\"") == true)
    }

    @Test func aDirectusValueAliasedIntoASinkIsStillNeeded() {
        let file = """
            directus:
              url: &hook ${SCOPE_HOOK_URL}
            subscriptions:
              - collection: articles
            sinks:
              - type: webhook
                url: *hook
            """
        let lines = messages(load(file, scope: .withoutDirectus))
        #expect(lines.count == 1, "\(lines)")
        #expect(lines.first?.hasPrefix("bridge.yaml:2:14: undefined variable \"SCOPE_HOOK_URL\"") == true)
    }

    @Test func anchorsHeldUnderAnExtensionKeyAreReadOnlyWhereAliased() throws {
        let file = """
            x-secrets:
              token: &token ${SCOPE_TOKEN}
            directus:
              url: http://127.0.0.1:8055
              auth:
                token: *token
            subscriptions:
              - collection: articles
            sinks:
              - type: ndjson
            """
        #expect(try load(file, scope: .withoutDirectus).get().directusSection == nil)
        #expect(messages(load(file, scope: .everything)).first?.contains("\"SCOPE_TOKEN\"") == true)
    }

    @Test func theFileMustStillBeAValidConfiguration() {
        let lines = messages(load(yaml(rest: "sinks: []\n"), scope: .withoutDirectus))
        #expect(lines.contains { $0.contains("sinks") }, "\(lines)")
        #expect(!lines.contains { $0.contains("SCOPE_") }, "\(lines)")
    }
}
