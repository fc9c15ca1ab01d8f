import BridgeTestSupport

extension Emulator {
    /// Creates `count` articles titled `<title> <n>` in one request; returns their keys.
    @discardableResult
    func createArticles(_ count: Int, title: String) throws -> [String] {
        let created = try rest("POST", "/items/articles", (0..<count).map { ["title": "\(title) \($0)"] })
        return ((created as? [String: Any])?["data"] as? [[String: Any]] ?? []).map { "\($0["id"]!)" }
    }

    /// Updates each of `keys` once, titled `round <round>`.
    func updateArticles(_ keys: [String], round: Int) throws {
        for key in keys { try rest("PATCH", "/items/articles/\(key)", ["title": "round \(round)"]) }
    }
}
