import BridgeConfig
import Testing

@Suite struct SubscriptionValidationTests {
    /// `minimalYAML` with the subscription list's body replaced by `lines` (indented two spaces).
    func yaml(subscriptions lines: [String]) -> String {
        minimalYAML.replacingOnce("  - collection: articles\n", with: lines.map { "  \($0)\n" }.joined())
    }

    @Test func subscriptionsAreRequiredAndNonEmpty() {
        let without = minimalYAML.replacingOnce("subscriptions:\n  - collection: articles\n", with: "")
        #expect(issues(without) == ["bridge.yaml:1:1: missing required key \"subscriptions\""])
        let empty = minimalYAML.replacingOnce("subscriptions:\n  - collection: articles\n", with: "subscriptions: []\n")
        #expect(issues(empty) == ["bridge.yaml:5:16: subscriptions: at least one subscription is required"])
        let scalar = minimalYAML.replacingOnce(
            "subscriptions:\n  - collection: articles\n",
            with: "subscriptions: articles\n"
        )
        #expect(
            issues(scalar) == [
                "bridge.yaml:5:16: subscriptions: expected a list such as [{ collection: articles }], got a string"
            ]
        )
    }

    @Test func collectionIsRequired() {
        #expect(
            issues(yaml(subscriptions: ["- uid: x"])) == [
                "bridge.yaml:6:5: missing required key \"collection\" in subscriptions[0]"
            ]
        )
        #expect(
            issues(yaml(subscriptions: ["- collection: \"\""])) == [
                "bridge.yaml:6:17: subscriptions[0].collection must not be empty"
            ]
        )
        #expect(
            issues(yaml(subscriptions: ["- articles"])) == [
                "bridge.yaml:6:5: subscriptions[0]: expected a mapping of keys, got a string"
            ]
        )
    }

    @Test func uidsMustBeUnique() {
        let result = issues(
            yaml(subscriptions: ["- collection: articles", "- collection: articles", "  events: [delete]"])
        )
        #expect(
            result == [
                "bridge.yaml:7:17: subscriptions[1]: duplicate uid \"articles\" (also used by subscriptions[0] at line 6); "
                    + "give each subscription of the same collection its own \"uid\""
            ]
        )
        let explicit = issues(
            yaml(subscriptions: ["- collection: a", "  uid: same", "- collection: b", "  uid: same"])
        )
        #expect(explicit.first?.hasPrefix("bridge.yaml:9:10: subscriptions[1]: duplicate uid \"same\"") == true)
        #expect(issues(yaml(subscriptions: ["- collection: a", "  uid: a2", "- collection: a"])) == ["<valid>"])
    }

    @Test func eventsAreCheckedOneByOne() {
        #expect(
            issues(yaml(subscriptions: ["- collection: a", "  events: [create, updat, create, snapshot]"])) == [
                "bridge.yaml:7:22: subscriptions[0].events[1]: unknown event \"updat\" (did you mean \"update\"? allowed: "
                    + "create, update, delete)",
                "bridge.yaml:7:29: subscriptions[0].events[2]: duplicate event \"create\"",
                "bridge.yaml:7:37: subscriptions[0].events[3]: \"snapshot\" is not a subscription event; set "
                    + "\"snapshot: true\" instead",
            ]
        )
        #expect(
            issues(yaml(subscriptions: ["- collection: a", "  events: []"])) == [
                "bridge.yaml:7:13: subscriptions[0].events: list at least one of create, update, delete"
            ]
        )
        #expect(
            issues(yaml(subscriptions: ["- collection: a", "  events: create"])) == [
                "bridge.yaml:7:13: subscriptions[0].events: expected a list such as [create, update], got a string"
            ]
        )
    }

    @Test func queryMustBeAMapping() {
        #expect(
            issues(yaml(subscriptions: ["- collection: a", "  query: [id]"])) == [
                "bridge.yaml:7:12: subscriptions[0].query: expected a mapping (a Directus query such as "
                    + "{ fields: [\"*\"] }), got a list"
            ]
        )
        #expect(
            issues(yaml(subscriptions: ["- collection: a", "  query: { limit: .inf }"])) == [
                "bridge.yaml:7:21: subscriptions[0].query.limit: \".inf\" cannot be sent as JSON (quote it to send a "
                    + "string)"
            ]
        )
    }

    @Test func snapshotIsABoolean() throws {
        #expect(try config(yaml(subscriptions: ["- collection: a", "  snapshot: true"])).subscriptions[0].snapshot)
        #expect(
            issues(yaml(subscriptions: ["- collection: a", "  snapshot: on"])) == [
                "bridge.yaml:7:15: subscriptions[0].snapshot: expected true or false, got \"on\""
            ]
        )
    }

    @Test func uidDefaultsToTheCollection() throws {
        let config = try config(yaml(subscriptions: ["- collection: a", "- collection: b", "  uid: b-deletes"]))
        #expect(config.subscriptions.map(\.uid) == ["a", "b-deletes"])
    }
}
