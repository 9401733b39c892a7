import HappyCore
@testable import HappyServer
import XCTest

/// The one credential check (PROTOCOL.md sections 7 and 13) behind the
/// WebSocket, the room routes and the operator API, and how each side says
/// a refusal: a WebSocket closes with 1008, HTTP answers 401 or 403, both
/// with the same reason.
final class AccessCheckTests: XCTestCase {
    func testATokenIsJudgedAlikeOnTheWebSocketAndTheRoomRoutes() {
        let access = TestTokens.server().server.access
        let viewer = TestTokens.mint("vera", role: .viewer, room: "gallery")
        let sides: [(String) -> AccessRequest] = [AccessRequest.webSocket, AccessRequest.roomRoute]
        for side in sides {
            XCTAssertEqual(access.check(viewer, for: side("gallery")), .success(AccessGrant(role: .viewer, name: "vera")))
            XCTAssertEqual(access.check(viewer, for: side("lobby")),
                           .failure(.forbidden("the token does not allow room lobby")))
        }
        let forged = HMACSHA256.verifier(secret: "not-the-secret").mint(AccessClaims(subject: "mallory", role: .admin))
        XCTAssertEqual(access.check(forged, for: .webSocket(room: "lobby")),
                       .failure(.unauthorized("invalid token: token signature does not match")))
        XCTAssertEqual(access.check(forged, for: .roomRoute(room: "lobby")),
                       .failure(.unauthorized("invalid token: token signature does not match")))
        // Only the missing token's hint differs: a WebSocket client is told where a token goes.
        XCTAssertEqual(access.check(nil, for: .roomRoute(room: "lobby")),
                       .failure(.unauthorized("an access token is required")))
        XCTAssertEqual(access.check(nil, for: .webSocket(room: "lobby")),
                       .failure(.unauthorized("an access token is required (query token= or Authorization: Bearer)")))
    }

    func testWithoutASecretEveryoneIsAPlayerAndOperatorsShowTheKey() {
        let access = TestServer().server.access
        XCTAssertEqual(access.check(nil, for: .webSocket(room: "lobby")), .success(AccessGrant(role: .player, name: nil)))
        XCTAssertEqual(access.check("anything", for: .roomRoute(room: "lobby")),
                       .success(AccessGrant(role: .player, name: nil)))
        XCTAssertEqual(access.check(TestServer.operatorKey.value, for: .operatorAPI(room: nil)),
                       .success(AccessGrant(role: .admin, name: nil)))
        XCTAssertEqual(access.check("guess", for: .operatorAPI(room: "lobby")),
                       .failure(.unauthorized("that is not the operator key (see /nowhere/operator.key)")))
    }

    func testOperatorsNeedAnAdminTokenForTheRoomOrForEveryRoom() {
        let access = TestTokens.server().server.access
        let admin = TestTokens.mint("ada", role: .admin)
        let roomAdmin = TestTokens.mint("rae", role: .admin, room: "q")
        XCTAssertEqual(access.check(admin, for: .operatorAPI(room: nil)), .success(AccessGrant(role: .admin, name: "ada")))
        XCTAssertEqual(access.check(roomAdmin, for: .operatorAPI(room: "q")),
                       .success(AccessGrant(role: .admin, name: "rae")))
        XCTAssertEqual(access.check(roomAdmin, for: .operatorAPI(room: "lobby")),
                       .failure(.forbidden("the token does not allow room lobby")))
        XCTAssertEqual(access.check(roomAdmin, for: .operatorAPI(room: nil)).failureCode, .forbidden)
        XCTAssertEqual(access.check(TestTokens.mint("pat", role: .player), for: .operatorAPI(room: nil)),
                       .failure(.forbidden("the operator API needs the admin role")))
        XCTAssertEqual(access.check(TestServer.operatorKey.value, for: .operatorAPI(room: nil)).failureCode,
                       .unauthorized, "with a secret the operator key is no credential")
    }

    func testEachSideSaysTheSameRefusalItsOwnWay() {
        let test = TestTokens.server()
        let token = TestTokens.mint("vera", role: .viewer, room: "gallery")

        let state = test.request("GET", "/api/state", query: ["room": "lobby", "token": token])
        XCTAssertEqual(state.status, 403)
        XCTAssertEqual(state.text, #"{"type":"error","code":"forbidden","message":"the token does not allow room lobby"}"#)
        let anonymous = test.request("GET", "/api/state", query: ["room": "lobby"])
        XCTAssertEqual(anonymous.status, 401)
        XCTAssertEqual(anonymous.text, #"{"type":"error","code":"unauthorized","message":"an access token is required"}"#)

        let client = test.connect(room: "lobby", token: token)
        test.pump(client)
        XCTAssertEqual(client.closeFrame?.closeCode, 1008)
        XCTAssertEqual(client.closeFrame?.closeReason, "the token does not allow room lobby")
    }
}

private extension Result where Failure == AccessRefusal {
    var failureCode: ErrorCode? {
        if case .failure(let refusal) = self { return refusal.code }
        return nil
    }
}
