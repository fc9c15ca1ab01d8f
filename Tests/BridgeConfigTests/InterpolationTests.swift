import BridgeConfig
import Testing

@Suite struct InterpolationTests {
    /// `minimalYAML` with the token given as `value`.
    func yaml(token value: String) -> String {
        minimalYAML.replacingOnce("token: secret-token", with: "token: \(value)")
    }

    func token(_ value: String, environment: [String: String]) throws -> String? {
        let config = try config(yaml(token: value), environment: environment)
        guard case .token(let token) = config.directus.auth.credentials else { return nil }
        return token
    }

    @Test func replacesVariablesInsideValues() throws {
        #expect(try token("${TOKEN}", environment: ["TOKEN": "abc"]) == "abc")
        #expect(try token("pre-${A}-${B}-post", environment: ["A": "1", "B": "2"]) == "pre-1-2-post")
        #expect(try token("\"quoted ${A}\"", environment: ["A": "x"]) == "quoted x")
        #expect(try token("'single ${A}'", environment: ["A": "x"]) == "single x")
    }

    @Test func defaultsApplyWhenUnsetOrEmpty() throws {
        #expect(try token("${TOKEN:-fallback}", environment: [:]) == "fallback")
        #expect(try token("${TOKEN:-fallback}", environment: ["TOKEN": ""]) == "fallback")
        #expect(try token("${TOKEN:-fallback}", environment: ["TOKEN": "set"]) == "set")
        #expect(try token("\"${TOKEN:-with spaces: and colon}\"", environment: [:]) == "with spaces: and colon")
    }

    @Test func doubleDollarIsALiteralDollar() throws {
        #expect(try token("$${TOKEN}", environment: ["TOKEN": "no"]) == "${TOKEN}")
        #expect(try token("pa$$word", environment: [:]) == "pa$word")
        #expect(try token("$$$${X}", environment: ["X": "v"]) == "$${X}")
        #expect(try token("$$${X}", environment: ["X": "v"]) == "$v")
        #expect(try token("cost$5", environment: [:]) == "cost$5")
    }

    @Test func aValueCannotChangeTheStructure() throws {
        // One scalar still, not YAML: the only issue is the token's own line breaks (a credential is one line).
        let value = "x\nsubscriptions: []\n  evil: {"
        #expect(
            issues(yaml(token: "${TOKEN}"), environment: ["TOKEN": value]) == [
                "bridge.yaml:4:12: directus.auth.token must be one line: it holds a line break (CR or LF) or NUL; "
                    + "the value is not shown"
            ])
        let oneLine = "x subscriptions: [] evil: {"
        #expect(try token("${TOKEN}", environment: ["TOKEN": oneLine]) == oneLine)
    }

    @Test func undefinedVariableIsReportedAtTheReference() {
        #expect(
            issues(yaml(token: "${TOKEN}")) == [
                "bridge.yaml:4:12: undefined variable \"TOKEN\" (set it in the environment, or give a default: "
                    + "${TOKEN:-default})"
            ]
        )
    }

    @Test func secondReferenceInAValueIsLocatedExactly() {
        let result = issues(yaml(token: "\"${A}-$${B}-${C}\""), environment: ["A": "a"])
        #expect(result.count == 1, "\(result)")
        #expect(result.first?.hasPrefix("bridge.yaml:4:24: undefined variable \"C\"") == true)
    }

    @Test func referencesInBlockScalarsAreLocatedOnTheirLine() {
        let yaml = yaml(token: "|\n      first line\n      then ${MISSING}\n")
        #expect(issues(yaml).first?.hasPrefix("bridge.yaml:6:12: undefined variable \"MISSING\"") == true)
    }

    @Test func everyUndefinedVariableIsReported() {
        let yaml = minimalYAML.replacingOnce("http://127.0.0.1:8055", with: "${URL}")
            .replacingOnce("secret-token", with: "${TOKEN}")
        #expect(
            issues(yaml).map { $0.prefix(while: { $0 != "(" }) } == [
                "bridge.yaml:2:8: undefined variable \"URL\" ", "bridge.yaml:4:12: undefined variable \"TOKEN\" ",
            ]
        )
    }

    @Test func failedValueIsNotReportedTwice() {
        // The url would also be "not http(s)" and the duration "invalid": only the variable is the problem.
        let yaml = minimalYAML.replacingOnce("http://127.0.0.1:8055", with: "${URL}") + "shutdown_timeout: ${T}\n"
        #expect(issues(yaml).count == 2)
    }

    @Test func unterminatedAndInvalidReferences() {
        #expect(
            issues(yaml(token: "${TOKEN")) == [
                "bridge.yaml:4:12: unterminated \"${\" (close it with \"}\", or write \"$${\" for a literal \"${\")"
            ]
        )
        #expect(
            issues(yaml(token: "${1ABC}")) == [
                "bridge.yaml:4:12: invalid reference \"${1ABC}\" (write ${NAME} or ${NAME:-default}; NAME is letters, "
                    + "digits and _)"
            ]
        )
        #expect(
            issues(yaml(token: "${TOKEN:default}")).first?.contains("invalid reference \"${TOKEN:default}\"") == true
        )
    }

    @Test func keysAreNotInterpolated() {
        let yaml = minimalYAML + "${KEY}: 1\n"
        #expect(
            issues(yaml, environment: ["KEY": "log"]).first?.hasPrefix("bridge.yaml:9:1: unknown key \"${KEY}\"")
                == true
        )
    }

    @Test func plainValuesAreTypedAfterInterpolation() throws {
        let yaml =
            minimalYAML.replacingOnce(
                "  - collection: articles\n",
                with: "  - collection: articles\n    snapshot: ${SNAP:-true}\n    query:\n      limit: ${LIMIT}\n"
                    + "      q: \"${LIMIT}\"\n"
            )
            + "delivery:\n  max_queue: ${QUEUE:-42}\n"
        let config = try config(yaml, environment: ["LIMIT": "7"])
        #expect(config.subscriptions[0].snapshot)
        #expect(config.subscriptions[0].query?.jsonText == #"{"limit":7,"q":"7"}"#)
        #expect(config.delivery.maxQueue == 42)
    }

    @Test func emptyVariableInAnOptionalValueMeansUnset() throws {
        let yaml = minimalYAML.replacingOnce(
            "    token: secret-token\n",
            with: "    token: secret-token\n    otp: ${OTP:-}\n"
        )
        #expect(try config(yaml).directus.auth.credentials == .token("secret-token"))
    }
}
