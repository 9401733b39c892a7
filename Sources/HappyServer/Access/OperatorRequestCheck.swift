import HappyCore

/// What an operator request must show besides its credential (PROTOCOL.md
/// section 13), so that a page elsewhere cannot act through the operator's
/// browser: a `Host` that names this server (against DNS rebinding), an
/// `Origin`, when there is one, that is this server's own or an allowed one,
/// and a body that is JSON or nothing (a plain form cannot send JSON).
struct OperatorRequestCheck {
    /// Lower-case host names the server answers to: `host` (unless a wildcard), `localhost`, `publicHosts`.
    let serverNames: Set<String>
    let allowedOrigins: [String]
    let scheme: String

    init(config: HappyConfig) {
        var names = Set(config.publicHosts.map { $0.lowercased() })
        names.insert("localhost")
        if !["0.0.0.0", "::", ""].contains(config.host) { names.insert(config.host.lowercased()) }
        serverNames = names
        allowedOrigins = config.auth.allowedOrigins
        scheme = config.tls.isEnabled ? "https" : "http"
    }

    /// Why the request may not go on (forbidden: HTTP 403), or nil.
    func refusal(method: String, host: String?, origin: String?, contentType: String?, bodyLength: Int) -> AccessRefusal? {
        guard let host, let name = HostName.ofHostHeader(host) else {
            return .forbidden("the operator API needs a Host header naming this server")
        }
        guard IPAddress(name) != nil || serverNames.contains(name) else {
            return .forbidden("Host \(host) is not a name of this server: if it answers "
                + "to that name, add it to publicHosts in the config")
        }
        if let origin, origin != "\(scheme)://\(host.lowercased())", !allowedOrigins.contains(origin) {
            return .forbidden("requests from the page at \(origin) may not use the "
                + "operator API: only this server's own pages and auth.allowedOrigins may")
        }
        if method != "GET" && method != "HEAD" && bodyLength > 0 && !Self.isJSON(contentType) {
            return .forbidden("a request that changes something must send its body "
                + "as Content-Type: application/json")
        }
        return nil
    }

    /// `application/json`, with or without parameters.
    static func isJSON(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        let type = contentType.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
        return type.trimmingCharacters(in: .whitespaces).lowercased() == "application/json"
    }
}
