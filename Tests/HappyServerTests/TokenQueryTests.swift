import Foundation
import HappyCore
import XCTest

/// With `auth.secret` set, the HTTP API takes the token from the query
/// (`?token=`) as well as from `Authorization: Bearer` (PROTOCOL.md section 7).
final class TokenQueryTests: XCTestCase {
    private var server: ServerProcess!

    override func setUpWithError() throws {
        server = try ServerProcess(["auth": ["secret": "query-\(UUID().uuidString)"]])
    }

    override func tearDown() {
        server = nil
    }

    private func stateStatus(_ query: String, headers: [String: String] = [:]) throws -> HTTP.Response {
        try HTTP.get("\(server.httpBase)/api/state?\(query)", headers: headers)
    }

    private func post(_ query: String, _ body: String) throws -> HTTP.Response {
        try HTTP.post("\(server.httpBase)/api/intent?\(query)", body: body)
    }

    func testStateAndIntentAcceptATokenInTheQuery() throws {
        let token = try TokenMinter.mint(server, subject: "quinn", role: "player", room: "q")
        let posted = try post("room=q&token=\(token)", #"{"id":"t1","action":"face.setHappiness","value":12}"#)
        XCTAssertEqual(posted.status, 200, posted.text)
        XCTAssertEqual(posted.json?["id"]?.stringValue, "t1")
        XCTAssertEqual(posted.json?["result"]?.stringValue, "applied")

        let byQuery = try stateStatus("room=q&token=\(token)")
        XCTAssertEqual(byQuery.status, 200)
        XCTAssertEqual(byQuery.json?["seq"]?.intValue, 1)
        XCTAssertEqual(byQuery.json?["state"]?["face"]?["happiness"]?.intValue, 12)
        let byHeader = try stateStatus("room=q", headers: ["Authorization": "Bearer \(token)"])
        XCTAssertEqual(byHeader.status, 200)
        XCTAssertEqual(byHeader.json?["seq"], byQuery.json?["seq"], "both ways read the same room")
    }

    func testAMissingOrWrongQueryTokenIs401AndAnotherRoomIs403() throws {
        let token = try TokenMinter.mint(server, subject: "quinn", role: "player", room: "q")
        let wrong = String(token.dropLast(3)) + (token.hasSuffix("AAA") ? "BBB" : "AAA")
        let intent = #"{"action":"dragon.forward"}"#
        for (label, query) in [("no token", "room=q"), ("empty token", "room=q&token="), ("tampered", "room=q&token=\(wrong)"),
                               ("not a token", "room=q&token=hello")] {
            let state = try stateStatus(query)
            XCTAssertEqual(state.status, 401, label)
            XCTAssertEqual(state.json?["code"]?.stringValue, "unauthorized", label)
            XCTAssertEqual(try post(query, intent).status, 401, label)
        }
        let elsewhere = try stateStatus("room=elsewhere&token=\(token)")
        XCTAssertEqual(elsewhere.status, 403)
        XCTAssertEqual(elsewhere.json?["code"]?.stringValue, "forbidden")
        XCTAssertEqual(try post("room=elsewhere&token=\(token)", intent).status, 403)
        XCTAssertEqual(try stateStatus("room=q&token=\(token)").json?["seq"]?.intValue, 0, "no refused call changed the room")
    }

    func testAViewerQueryTokenReadsButMayNotSendIntents() throws {
        let viewer = try TokenMinter.mint(server, subject: "vera", role: "viewer")
        XCTAssertEqual(try stateStatus("room=lobby&token=\(viewer)").status, 200)
        let refused = try post("room=lobby&token=\(viewer)", #"{"id":"v","action":"dragon.forward"}"#)
        XCTAssertEqual(refused.status, 403)
        XCTAssertEqual(refused.json?["code"]?.stringValue, "forbidden")
        XCTAssertEqual(refused.json?["id"]?.stringValue, "v")
    }
}
