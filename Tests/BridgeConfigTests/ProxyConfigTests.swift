import BridgeConfig
import BridgeSystem
import Testing

/// `directus.proxy`: the one proxy the bridge uses, for REST and the socket alike (issue 23, "Proxies"). Its user
/// name and password are percent-decoded, known to the redactor, and never shown: not by a refusal, not by the
/// effective configuration.
@Suite struct ProxyConfigTests {
    private func withProxy(_ url: String) -> String {
        minimalYAML.replacingOnce("url: http://127.0.0.1:8055", with: "url: http://127.0.0.1:8055\n  proxy: \"\(url)\"")
    }

    @Test func noProxyUnlessConfigured() throws {
        #expect(try config(minimalYAML).directus.proxy == nil)
        #expect(try config(withProxy("")).directus.proxy == nil)
    }

    @Test func aProxyURLIsParsedWithDecodedCredentials() throws {
        let parsed = try config(withProxy("http://ops%40corp:p%3Ass%2Fw0rd@proxy.internal:3128/"))
        let proxy = try #require(parsed.directus.proxy)
        #expect(proxy == HTTPProxy(host: "proxy.internal", port: 3128, user: "ops@corp", password: "p:ss/w0rd"))
        #expect(proxy.description == "http://proxy.internal:3128")
        #expect(proxy.basicCredentials == "ops@corp:p:ss/w0rd")
        #expect(parsed.allSecrets.contains("p:ss/w0rd"))
        #expect(parsed.description.contains("  proxy: \"http://proxy.internal:3128\"  # with a user and password"))
        #expect(!parsed.description.contains("p:ss/w0rd") && !parsed.description.contains("p%3Ass"))

        let bare = try #require(try config(withProxy("http://[::1]")).directus.proxy)
        #expect(bare == HTTPProxy(host: "::1", port: 80))
        #expect(bare.description == "http://[::1]:80" && bare.basicCredentials == nil)
    }

    @Test(arguments: [
        ("https://u:hunter2@proxy:3128", "scheme \"https\" is not one of http"),
        ("socks5://u:hunter2@proxy:1080", "scheme \"socks5\" is not one of http"),
        ("http://u:hunter2@proxy:3128/path", "a proxy URL has no path"),
        ("http://u:hunter2@proxy:3128?x=1", "a query or fragment is not supported"),
        ("http://u:hunter2%0D%0AX-Injected:%20yes@proxy:3128", "the user name or password holds CR, LF or NUL"),
        ("http://u:hunter2%00@proxy:3128", "the user name or password holds CR, LF or NUL"),
        ("http://u:hunter2@proxy:99999", "port \"99999\" is not a number from 1 to 65535"),
        ("proxy:3128", "expected http://"),
    ])
    func aBadProxyURLIsRefusedWithoutItsPassword(url: String, reason: String) {
        let found = issues(withProxy(url))
        #expect(found.count == 1, "\(found)")
        #expect(found.first?.contains("directus.proxy: ") == true, "\(found)")
        #expect(found.first?.contains(reason) == true, "\(found)")
        #expect(!found.joined().contains("hunter2"), "\(found)")
    }
}
