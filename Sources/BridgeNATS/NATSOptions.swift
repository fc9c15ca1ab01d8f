internal import BridgeSystem
internal import CNats

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Owns a `natsOptions` built from `NATSSettings`; libnats copies it into each connection it makes.
final class NATSOptions {
    let pointer: OpaquePointer

    private init(pointer: OpaquePointer) { self.pointer = pointer }

    deinit { natsOptions_Destroy(pointer) }

    /// Options for `settings`, calling back into `context` (passed as the callbacks' closure; see
    /// `NATSConnection.connect` for its lifetime). Throws a configuration error naming the refused setting.
    static func make(_ settings: NATSSettings, context: UnsafeMutableRawPointer) throws(NATSError) -> NATSOptions {
        var raw: OpaquePointer?
        try check(natsOptions_Create(&raw), "options")
        guard let raw else { throw NATSError(kind: .configuration, message: "libnats could not allocate options") }
        let options = NATSOptions(pointer: raw)
        let servers = try settings.validatedServers()
        try options.setServers(servers)
        try check(natsOptions_SetName(raw, settings.name), "name")
        try check(natsOptions_SetTimeout(raw, settings.connectTimeout.roundedUpMilliseconds), "connect timeout")
        // Reconnect forever, to any server of the cluster: a broker that is down is retried, events wait.
        try check(natsOptions_SetMaxReconnect(raw, -1), "reconnect")
        try check(natsOptions_SetReconnectWait(raw, settings.reconnectWait.roundedUpMilliseconds), "reconnect wait")
        try check(natsOptions_SetReconnectJitter(raw, 100, 1000), "reconnect jitter")
        try check(natsOptions_SetPingInterval(raw, max(1, settings.pingInterval.roundedUpMilliseconds)), "ping")
        try check(natsOptions_SetMaxPingsOut(raw, 2), "pings out")
        // A request (the stream probe) fails at once on a lost connection instead of waiting for its timeout.
        try check(natsOptions_SetFailRequestsOnDisconnect(raw, true), "requests on disconnect")
        try options.setCredentials(settings.credentials)
        if settings.requireTLS || settings.caFile != nil { try check(natsOptions_SetSecure(raw, true), "TLS") }
        // The certificate must name the configured host: set explicitly, so that it does not depend on how libnats
        // was built (NATSSettings.expectedHostname says when one name fits every server).
        if let host = settings.expectedHostname {
            try check(natsOptions_SetExpectedHostname(raw, host), "expected host name")
        }
        if let caFile = settings.caFile {
            try check(natsOptions_LoadCATrustedCertificates(raw, caFile), "CA file \(caFile)")
        }
        try check(natsOptions_SetDisconnectedCB(raw, natsDisconnected, context), "callbacks")
        try check(natsOptions_SetReconnectedCB(raw, natsReconnected, context), "callbacks")
        try check(natsOptions_SetClosedCB(raw, natsClosed, context), "callbacks")
        try check(natsOptions_SetErrorHandler(raw, natsAsyncError, context), "callbacks")
        return options
    }

    private func setServers(_ servers: [String]) throws(NATSError) {
        // libnats copies the URLs; the C strings only need to live for the call.
        var cStrings = servers.map { strdup($0) }
        defer { for string in cStrings { free(string) } }
        let status = cStrings.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) {
                natsOptions_SetServers(pointer, $0, Int32(buffer.count))
            }
        }
        try Self.check(status, "servers")
    }

    private func setCredentials(_ credentials: NATSSettings.Credentials) throws(NATSError) {
        switch credentials {
        case .none:
            return
        case .credentialsFile(let path):
            try Self.check(natsOptions_SetUserCredentialsFromFiles(pointer, path, nil), "credentials file \(path)")
        case .token(let token):
            try Self.check(natsOptions_SetToken(pointer, token), "token")
        case .userPassword(let user, let password):
            try Self.check(natsOptions_SetUserInfo(pointer, user, password), "user and password")
        }
    }

    /// Throws a configuration error naming `what` (never its value) when `status` is not OK.
    private static func check(_ status: natsStatus, _ what: String) throws(NATSError) {
        guard status != NATS_OK else { return }
        var error = NATSError.from(status: status, context: "NATS setting \(what)")
        error.kind = .configuration
        throw error
    }
}
