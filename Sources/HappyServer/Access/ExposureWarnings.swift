import HappyCore

/// What a server listening beyond loopback exposes, said at start so that
/// nobody runs an open server without knowing it.
enum ExposureWarnings {
    /// One line per exposure; none on a loopback address.
    static func check(_ config: HappyConfig) -> [String] {
        guard !listensOnLoopbackOnly(config.host) else { return [] }
        var warnings: [String] = []
        if config.auth.secret.isEmpty {
            warnings.append("listening on \(config.host) without auth.secret: anyone who reaches this address can join "
                + "and steer every room and read its history and frames; set auth.secret to require tokens")
        }
        if !config.tls.isEnabled {
            warnings.append("listening on \(config.host) without TLS: tokens, the operator key and every message "
                + "cross the network in clear; set tls.cert and tls.key, or serve it behind a TLS proxy on this host")
        }
        return warnings
    }

    static func listensOnLoopbackOnly(_ host: String) -> Bool {
        host.lowercased() == "localhost" || IPAddress(host)?.isLoopback == true
    }
}
