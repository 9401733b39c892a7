import HappyCore

/// The room an HTTP request names (`room`, else the default room) and the
/// caller's role and name from its token: the check every room route makes first.
struct RoomAccess {
    let access: AccessControl
    let defaultRoom: String
    /// `http` or `https`: with a request's `Host`, the origin of the server's own pages.
    let scheme: String

    func check(_ request: HTTPRequest) -> Result<(room: String, role: Role, name: String?), HTTPError> {
        let name = request.query["room"] ?? defaultRoom
        guard Names.isValidRoom(name) else {
            return .failure(HTTPError(.invalidValue, "room must be 1-64 characters of A-Z a-z 0-9 _ -"))
        }
        let token = AccessControl.token(query: request.query, authorization: request.headers["authorization"])
        return access.check(token, for: .roomRoute(room: name))
            .map { (name, $0.role, $0.name) }
            .mapError { HTTPError($0) }
    }

    /// A request that changes something: `check`, and a page's `Origin` must be allowed (403 otherwise).
    func checkChange(_ request: HTTPRequest) -> Result<(room: String, role: Role, name: String?), HTTPError> {
        let origin = request.headers["origin"]
        let own = request.headers["host"].map { "\(scheme)://\($0.lowercased())" }
        guard access.allowsChange(fromOrigin: origin, ownOrigin: own) else {
            return .failure(HTTPError(.forbidden,
                                      "origin \(origin ?? "") is not allowed (auth.allowedOrigins) to change rooms here"))
        }
        return check(request)
    }
}
