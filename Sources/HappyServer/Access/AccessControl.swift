import HappyCore

/// Access control (PROTOCOL.md section 7): without `auth.secret` everyone is
/// a player; with it, a valid HS256 token decides name, role and room.
/// Browser pages must come from `auth.allowedOrigins` when it is set.
final class AccessControl {
    enum Decision: Equatable {
        case allowed(role: Role, name: String?)
        case refused(String)
    }

    private var auth: HappyConfig.AuthSection
    private var verifier: TokenVerifier?
    /// The operator credential while no `auth.secret` mints admin tokens.
    private let operatorKey: OperatorKey?
    private let clock: ServiceClock

    init(auth: HappyConfig.AuthSection, verifier: TokenVerifier?, operatorKey: OperatorKey?, clock: ServiceClock) {
        self.auth = auth
        self.verifier = verifier
        self.operatorKey = operatorKey
        self.clock = clock
    }

    /// Applies a configuration read again (SIGHUP): the new secret, audience,
    /// issuer and origins judge every token and page from now on.
    func reconfigure(_ auth: HappyConfig.AuthSection) {
        self.auth = auth
        verifier = HMACSHA256.verifier(for: auth)
    }

    var requiresTokens: Bool { !auth.secret.isEmpty }

    /// Whether a page from `origin` may open a WebSocket. A request without
    /// `Origin` does not come from a browser page (browsers always send it),
    /// so the list does not apply to it.
    func allowsOrigin(_ origin: String?) -> Bool {
        guard !auth.allowedOrigins.isEmpty, let origin else { return true }
        return auth.allowedOrigins.contains(origin)
    }

    /// Whether a page at `origin` may change something through an HTTP request
    /// (`auth.allowedOrigins`, as for WebSockets): a request without `Origin`
    /// is no browser page's, and the server's own pages (`ownOrigin`) always may.
    func allowsChange(fromOrigin origin: String?, ownOrigin: String?) -> Bool {
        guard let origin, !auth.allowedOrigins.isEmpty, origin != ownOrigin else { return true }
        return auth.allowedOrigins.contains(origin)
    }

    /// A WebSocket client's access, from its token (query `token=` or `Authorization: Bearer`).
    func authorize(token: String?, room: String) -> Decision {
        guard requiresTokens else { return .allowed(role: .player, name: nil) }
        guard let token else {
            return .refused("an access token is required (query token= or Authorization: Bearer)")
        }
        switch verify(token) {
        case .success(let claims):
            guard claims.allows(room: room) else { return .refused("the token does not allow room \(room)") }
            return .allowed(role: claims.role, name: claims.subject)
        case .failure(let rejection):
            return .refused("invalid token: \(rejection)")
        }
    }

    /// The role for an HTTP API call and the name its token gives the caller
    /// (nil without tokens), or the 401/403 to answer.
    func httpAccess(token: String?, room: String) -> Result<(role: Role, name: String?), HTTPError> {
        guard requiresTokens else { return .success((.player, nil)) }
        guard let token else { return .failure(HTTPError(.unauthorized, "an access token is required")) }
        switch verify(token) {
        case .success(let claims):
            guard claims.allows(room: room) else {
                return .failure(HTTPError(.forbidden, "the token does not allow room \(room)"))
            }
            return .success((claims.role, claims.subject))
        case .failure(let rejection):
            return .failure(HTTPError(.unauthorized, "invalid token: \(rejection)"))
        }
    }

    /// Whether an operator API request may go on (PROTOCOL.md section 13):
    /// its credential (`Authorization: Bearer`, from any address) is the
    /// operator key, or with `auth.secret` an admin token (for `room`, when
    /// the route names one); 401 or 403 otherwise.
    func operatorAccess(credential: String?, room: String? = nil) -> Result<Void, HTTPError> {
        guard let credential, !credential.isEmpty else {
            return .failure(HTTPError(.unauthorized, operatorKey == nil || requiresTokens
                ? "the operator API needs an admin token in Authorization: Bearer; make one with happyserver token --role admin"
                : "the operator API needs the operator key in Authorization: Bearer: the server prints the inspector's "
                    + "address with it at start, and keeps it in \(operatorKey!.path)"))
        }
        if let operatorKey, !requiresTokens {
            guard operatorKey.matches(credential) else {
                return .failure(HTTPError(.unauthorized, "that is not the operator key (see \(operatorKey.path))"))
            }
            return .success(())
        }
        if let operatorKey, operatorKey.matches(credential) {
            return .failure(HTTPError(.unauthorized, "the operator key is no credential while auth.secret "
                + "is set: send an admin token in Authorization: Bearer; make one with happyserver token --role admin"))
        }
        switch verify(credential) {
        case .failure(let rejection):
            return .failure(HTTPError(.unauthorized, "invalid token: \(rejection)"))
        case .success(let claims):
            guard claims.role == .admin else {
                return .failure(HTTPError(.forbidden, "the operator API needs the admin role"))
            }
            if let room, !claims.allows(room: room) {
                return .failure(HTTPError(.forbidden, "the token does not allow room \(room)"))
            }
            if room == nil, claims.room != nil {
                return .failure(HTTPError(.forbidden, "this needs an admin token for every room (one without a room claim): "
                    + "listing rooms and backups cover them all"))
            }
            return .success(())
        }
    }

    /// Why `role` may not perform `action`, or nil when it may.
    func refusal(for action: Action, role: Role) -> String? {
        if !role.maySendIntents { return "viewers may not send intents" }
        if action.requiresAdmin && requiresTokens && role != .admin {
            return "\(action.wireName) needs the admin role"
        }
        return nil
    }

    /// The token of a request: query `token=`, else `Authorization: Bearer`.
    static func token(query: [String: String], authorization: String?) -> String? {
        query["token"] ?? bearer(authorization)
    }

    /// The credential of an `Authorization: Bearer` header.
    static func bearer(_ authorization: String?) -> String? {
        guard let header = authorization else { return nil }
        let prefix = "bearer "
        guard header.lowercased().hasPrefix(prefix) else { return nil }
        return String(header.dropFirst(prefix.count)).trimmingCharacters(in: .whitespaces)
    }

    private func verify(_ token: String) -> Result<AccessClaims, TokenRejection> {
        guard let verifier else { return .failure(.malformed("token checking is not available")) }
        return verifier.verify(token, nowSeconds: clock.wallMilliseconds() / 1000)
    }
}
