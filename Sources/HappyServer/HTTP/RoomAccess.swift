import HappyCore

/// The room an HTTP request names (`room`, else the default room) and the
/// caller's role from its token: the check every room route makes first.
struct RoomAccess {
    let access: AccessControl
    let defaultRoom: String

    func check(_ exchange: HTTPExchange) -> Result<(room: String, role: Role), HTTPError> {
        let name = exchange.query["room"] ?? defaultRoom
        guard Names.isValidRoom(name) else {
            return .failure(HTTPError(status: 400, WireError(.invalidValue, "room must be 1-64 characters of A-Z a-z 0-9 _ -")))
        }
        let token = AccessControl.token(query: exchange.query, authorization: exchange.headers["authorization"])
        return access.httpRole(token: token, room: name).map { (name, $0) }
    }
}
