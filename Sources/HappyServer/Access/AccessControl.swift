import HappyCore

/// What a credential is checked for (`AccessControl.check`).
enum AccessRequest: Equatable {
    /// A WebSocket joining `room` (`/ws`).
    case webSocket(room: String)
    /// An HTTP route on `room`: `/api/state`, `/api/intent`, `/api/history`, frames and streams.
    case roomRoute(room: String)
    /// The operator API (PROTOCOL.md section 13) on `room`, or on every room (nil).
    case operatorAPI(room: String?)
}

/// Whom a credential admits: the role, and the name its token gives the
/// caller (nil: none, so the caller names itself).
struct AccessGrant: Equatable {
    let role: Role
    let name: String?
}

/// A credential refused: `unauthorized` (none, or not a valid one) or
/// `forbidden` (valid, but not for this), and what to do about it. Each
/// side says it its own way: HTTP as a 401 or 403, a WebSocket as a 1008 close.
struct AccessRefusal: Error, Equatable {
    let code: ErrorCode
    let message: String

    static func unauthorized(_ message: String) -> AccessRefusal { AccessRefusal(code: .unauthorized, message: message) }
    static func forbidden(_ message: String) -> AccessRefusal { AccessRefusal(code: .forbidden, message: message) }
}

/// Access control (PROTOCOL.md sections 7 and 13): without `auth.secret`
/// everyone is a player; with it, a valid HS256 token decides name, role
/// and room. The operator API takes the operator key, or with `auth.secret`
/// an admin token. Browser pages must come from `auth.allowedOrigins` when it is set.
final class AccessControl {
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

    /// The one check of a credential, for a WebSocket, a room route or the
    /// operator API (PROTOCOL.md sections 7 and 13): whom it admits, or why not.
    func check(_ credential: String?, for request: AccessRequest) -> Result<AccessGrant, AccessRefusal> {
        switch request {
        case .webSocket(let room):
            return roomAccess(credential, room: room,
                              missing: "an access token is required (query token= or Authorization: Bearer)")
        case .roomRoute(let room):
            return roomAccess(credential, room: room, missing: "an access token is required")
        case .operatorAPI(let room):
            return operatorAccess(credential, room: room)
        }
    }

    /// Without `auth.secret` everyone is a player; with it, a valid token
    /// that allows `room` decides. `missing`: what a caller without one is told.
    private func roomAccess(_ token: String?, room: String, missing: String) -> Result<AccessGrant, AccessRefusal> {
        guard requiresTokens else { return .success(AccessGrant(role: .player, name: nil)) }
        guard let token else { return .failure(.unauthorized(missing)) }
        switch verify(token) {
        case .success(let claims):
            guard claims.allows(room: room) else { return .failure(.forbidden("the token does not allow room \(room)")) }
            return .success(AccessGrant(role: claims.role, name: claims.subject))
        case .failure(let rejection):
            return .failure(.unauthorized("invalid token: \(rejection)"))
        }
    }

    /// The operator key (from any address) while no `auth.secret` mints
    /// admin tokens, else an admin token: for `room`, or with no room claim
    /// when the route covers every room (nil).
    private func operatorAccess(_ credential: String?, room: String?) -> Result<AccessGrant, AccessRefusal> {
        guard let credential, !credential.isEmpty else {
            return .failure(.unauthorized(operatorKey == nil || requiresTokens
                ? "the operator API needs an admin token in Authorization: Bearer; make one with happyserver token --role admin"
                : "the operator API needs the operator key in Authorization: Bearer: the server prints the inspector's "
                    + "address with it at start, and keeps it in \(operatorKey!.path)"))
        }
        if let operatorKey, !requiresTokens {
            guard operatorKey.matches(credential) else {
                return .failure(.unauthorized("that is not the operator key (see \(operatorKey.path))"))
            }
            return .success(AccessGrant(role: .admin, name: nil))
        }
        if let operatorKey, operatorKey.matches(credential) {
            return .failure(.unauthorized("the operator key is no credential while auth.secret is set: send an admin "
                + "token in Authorization: Bearer; make one with happyserver token --role admin"))
        }
        switch verify(credential) {
        case .failure(let rejection):
            return .failure(.unauthorized("invalid token: \(rejection)"))
        case .success(let claims):
            guard claims.role == .admin else { return .failure(.forbidden("the operator API needs the admin role")) }
            if let room, !claims.allows(room: room) {
                return .failure(.forbidden("the token does not allow room \(room)"))
            }
            if room == nil, claims.room != nil {
                return .failure(.forbidden("this needs an admin token for every room (one without a room claim): "
                    + "listing rooms and backups cover them all"))
            }
            return .success(AccessGrant(role: .admin, name: claims.subject))
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
