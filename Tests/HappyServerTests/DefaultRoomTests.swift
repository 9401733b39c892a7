import Foundation
import HappyCore
import XCTest

/// `defaultRoom`: where clients and HTTP calls that name no room go.
final class DefaultRoomTests: XCTestCase {
    func testClientsAndHTTPCallsWithoutARoomUseTheConfiguredOne() throws {
        let server = try ServerProcess(["defaultRoom": "hall"])
        let client = TestClient(url: server.wsURL, query: [("name", "alice")])
        let welcome = try XCTUnwrap(client.next(type: "welcome", timeout: 10))
        XCTAssertEqual(welcome["room"]?.stringValue, "hall")

        let posted = try HTTP.post("\(server.httpBase)/api/intent", body: #"{"id":"h","action":"face.setHappiness","value":66}"#)
        XCTAssertEqual(posted.status, 200)
        XCTAssertEqual(posted.json?["result"]?.stringValue, "applied")
        let event = try XCTUnwrap(client.next(type: "event"), "the client in the default room sees the HTTP intent")
        XCTAssertEqual(event["room"]?.stringValue, "hall")
        XCTAssertEqual(event["state"]?["face"]?["happiness"]?.intValue, 66)

        let state = try XCTUnwrap(HTTP.get("\(server.httpBase)/api/state").json)
        XCTAssertEqual(state["room"]?.stringValue, "hall")
        XCTAssertEqual(state["seq"]?.intValue, 1)
        XCTAssertEqual(state["presence"]?.arrayValue?.first?["name"]?.stringValue, "alice")

        let lobby = try XCTUnwrap(HTTP.get("\(server.httpBase)/api/state?room=lobby").json)
        XCTAssertEqual(lobby["seq"]?.intValue, 0, "lobby is just another room now")
        XCTAssertEqual(lobby["presenceCount"]?.intValue, 0)
    }
}
