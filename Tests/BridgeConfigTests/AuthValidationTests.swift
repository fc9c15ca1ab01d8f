import BridgeConfig
import Testing

@Suite struct AuthValidationTests {
    /// `minimalYAML` with the auth section's body replaced by `lines` (each indented four spaces).
    func yaml(auth lines: [String]) -> String {
        minimalYAML.replacingOnce(
            "    token: secret-token\n",
            with: lines.map { "    \($0)\n" }.joined()
        )
    }

    @Test func tokenLoginAndPublicAreRead() throws {
        #expect(try config(yaml(auth: ["token: t"])).directus.auth == AuthConfig(credentials: .token("t")))
        #expect(
            try config(yaml(auth: ["email: a@b.c", "password: pw"])).directus.auth
                == AuthConfig(credentials: .login(email: "a@b.c", password: "pw", otp: nil))
        )
        #expect(
            try config(yaml(auth: ["mode: public"])).directus.auth == AuthConfig(credentials: .none, mode: .public)
        )
    }

    @Test func tokenAndLoginTogetherAreRejected() {
        #expect(
            issues(yaml(auth: ["token: t", "email: a@b.c", "password: pw"])) == [
                "bridge.yaml:4:5: directus.auth: set either a token or email + password, not both"
            ]
        )
    }

    @Test func emailWithoutPasswordAndTheReverse() {
        #expect(
            issues(yaml(auth: ["email: a@b.c"])) == [
                "bridge.yaml:4:5: directus.auth: \"email\" needs \"password\" (or \"password_file\")"
            ]
        )
        #expect(
            issues(yaml(auth: ["password: pw"])) == ["bridge.yaml:4:5: directus.auth: \"password\" needs \"email\""]
        )
    }

    @Test func otpNeedsALogin() {
        #expect(
            issues(yaml(auth: ["token: t", "otp: \"123456\""])) == [
                "bridge.yaml:5:5: directus.auth.otp is only used with email + password"
            ]
        )
    }

    @Test func handshakeAndStrictNeedCredentials() {
        #expect(
            issues(yaml(auth: ["mode: strict"])) == [
                "bridge.yaml:4:11: directus.auth: mode \"strict\" needs credentials: set token (or token_file), or "
                    + "email and password; for public access set \"mode: public\""
            ]
        )
        let noAuth = minimalYAML.replacingOnce("  auth:\n    token: secret-token\n", with: "")
        #expect(
            issues(noAuth) == [
                "bridge.yaml:2:3: directus.auth: mode \"handshake\" needs credentials: set token (or token_file), or "
                    + "email and password; for public access set \"mode: public\""
            ]
        )
    }

    @Test func publicModeRefusesCredentials() {
        #expect(
            issues(yaml(auth: ["token: t", "mode: public"])) == [
                "bridge.yaml:5:11: directus.auth.mode: \"public\" means no credentials; remove the token/email/password "
                    + "or use mode \"handshake\" or \"strict\""
            ]
        )
    }

    @Test func unknownModeListsTheAllowedOnes() {
        #expect(
            issues(yaml(auth: ["token: t", "mode: strikt"])) == [
                "bridge.yaml:5:11: directus.auth.mode: unknown value \"strikt\" (did you mean \"strict\"? allowed: "
                    + "handshake, strict, public)"
            ]
        )
        #expect(
            issues(yaml(auth: ["token: t", "mode: cookie"])) == [
                "bridge.yaml:5:11: directus.auth.mode: unknown value \"cookie\" (allowed: handshake, strict, public)"
            ]
        )
    }

    @Test func emptyTokenCountsAsNoToken() {
        #expect(issues(yaml(auth: ["token: \"\""])).first?.contains("needs credentials") == true)
    }

    @Test func secretsAreReadFromFilesWithoutTheTrailingNewline() throws {
        let files = InMemoryFiles(["/run/token": "file-token\n", "/run/pw": "file-password\r\n"])
        #expect(
            try config(yaml(auth: ["token_file: /run/token"]), files: files).directus.auth.credentials
                == .token("file-token")
        )
        #expect(
            try config(yaml(auth: ["email: a@b.c", "password_file: /run/pw"]), files: files).directus.auth.credentials
                == .login(email: "a@b.c", password: "file-password", otp: nil)
        )
    }

    @Test func unreadableOrEmptySecretFilesAreReportedAtThePath() {
        let files = InMemoryFiles(["/run/empty": "\n"])
        #expect(
            issues(yaml(auth: ["token_file: /run/missing"]), files: files) == [
                "bridge.yaml:4:17: directus.auth.token_file: cannot read \"/run/missing\": No such file or directory"
            ]
        )
        #expect(
            issues(yaml(auth: ["token_file: /run/empty"]), files: files) == [
                "bridge.yaml:4:17: directus.auth.token_file: \"/run/empty\" is empty"
            ]
        )
    }

    @Test func inlineSecretAndFileTogetherAreRejected() {
        let files = InMemoryFiles(["/run/token": "x"])
        #expect(
            issues(yaml(auth: ["token: t", "token_file: /run/token"]), files: files) == [
                "bridge.yaml:5:5: directus.auth: set \"token\" or \"token_file\", not both"
            ]
        )
    }

    @Test func messagesNeverContainTheSecret() {
        let result = issues(yaml(auth: ["token: super-secret-value", "mode: public"]))
        #expect(result.count == 1)
        #expect(!result.joined().contains("super-secret-value"))
    }

    @Test func insecureSkipVerifyMustBeAnExplicitBoolean() throws {
        func tls(_ value: String) -> String {
            minimalYAML.replacingOnce("  auth:\n", with: "  tls:\n    insecure_skip_verify: \(value)\n  auth:\n")
        }
        #expect(try config(tls("true")).directus.tls.insecureSkipVerify)
        #expect(try !config(tls("false")).directus.tls.insecureSkipVerify)
        #expect(
            issues(tls("yes")) == [
                "bridge.yaml:4:27: directus.tls.insecure_skip_verify: expected true or false, got \"yes\""
            ]
        )
        #expect(
            issues(tls("\"true\"")) == [
                "bridge.yaml:4:27: directus.tls.insecure_skip_verify: expected true or false, got the quoted string "
                    + "\"true\""
            ]
        )
        #expect(
            issues(tls("1")) == [
                "bridge.yaml:4:27: directus.tls.insecure_skip_verify: expected true or false, got \"1\""
            ]
        )
    }

    @Test func caFileMustBeReadablePEM() throws {
        func tls(_ path: String) -> String {
            minimalYAML.replacingOnce("  auth:\n", with: "  tls:\n    ca_file: \(path)\n  auth:\n")
        }
        let files = InMemoryFiles(["/ca.pem": "-----BEGIN CERTIFICATE-----\n", "/junk": "hello"])
        #expect(try config(tls("/ca.pem"), files: files).directus.tls.caFile == "/ca.pem")
        #expect(try config(tls("\"\""), files: files).directus.tls.caFile == nil)
        #expect(
            issues(tls("/nope"), files: files) == [
                "bridge.yaml:4:14: directus.tls.ca_file: cannot read \"/nope\": No such file or directory"
            ]
        )
        #expect(
            issues(tls("/junk"), files: files) == [
                "bridge.yaml:4:14: directus.tls.ca_file: \"/junk\" holds no PEM certificate"
            ]
        )
    }
}
