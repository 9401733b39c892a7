import CWebSockets
import HappyCore

/// Access control (PROTOCOL.md section 7): without `auth.secret` everyone is
/// a player; with it, a valid HS256 token decides name, role and room.
extension HappyServer {
    enum AccessDecision {
        case allowed(role: Role, name: String?)
        case refused(String)
    }

    /// Checks a WebSocket client's token (query `token=` or `Authorization: Bearer`).
    func authorize(_ connection: Connection, query: [String: String], room: String) -> AccessDecision {
        guard !config.auth.secret.isEmpty else { return .allowed(role: .player, name: nil) }
        guard let token = query["token"] ?? bearerToken(connection.wsi) else {
            return .refused("an access token is required (query token= or Authorization: Bearer)")
        }
        switch verifyToken(token) {
        case .success(let claims):
            guard claims.allows(room: room) else { return .refused("the token does not allow room \(room)") }
            return .allowed(role: claims.role, name: claims.subject)
        case .failure(let rejection):
            return .refused("invalid token: \(rejection)")
        }
    }

    /// The role for an HTTP API call, or nil after answering 401/403.
    func httpAccess(_ exchange: HTTPExchange, room: String) -> Role? {
        guard !config.auth.secret.isEmpty else { return .player }
        guard let token = exchange.query["token"] ?? bearerToken(exchange.wsi) else {
            respondError(exchange, status: 401, code: "unauthorized", "an access token is required")
            return nil
        }
        switch verifyToken(token) {
        case .success(let claims):
            guard claims.allows(room: room) else {
                respondError(exchange, status: 403, code: "forbidden", "the token does not allow room \(room)")
                return nil
            }
            return claims.role
        case .failure(let rejection):
            respondError(exchange, status: 401, code: "unauthorized", "invalid token: \(rejection)")
            return nil
        }
    }

    private func verifyToken(_ token: String) -> Result<AccessClaims, TokenRejection> {
        guard let verifier = tokenVerifier else { return .failure(.malformed("token checking is not available")) }
        return verifier.verify(token, nowSeconds: SystemTime.wallMilliseconds() / 1000)
    }

    private func bearerToken(_ wsi: OpaquePointer) -> String? {
        guard let header = LWSHeaders.value(wsi, WSI_TOKEN_HTTP_AUTHORIZATION) else { return nil }
        let prefix = "bearer "
        guard header.lowercased().hasPrefix(prefix) else { return nil }
        return String(header.dropFirst(prefix.count)).trimmingCharacters(in: .whitespaces)
    }
}
