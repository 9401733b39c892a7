import Foundation
import HappyCore
import XCTest

/// Presence messages are not numbered and not replayed (PROTOCOL.md section
/// 3): a client that resumes gets the events it missed, and the room's
/// current members only through its welcome.
final class PresenceResumeTests: XCTestCase {
    func testAResumingClientGetsTheMissedEventsButNoOldPresence() throws {
        let server = try ServerProcess()
        let (alice, first) = try TestClient.join(server, room: "r", name: "alice")
        let epoch = try XCTUnwrap(first["epoch"]?.stringValue)
        alice.intent("face.setHappiness", id: "a1", ["value": 60])
        let since = try XCTUnwrap(alice.next(type: "ack")?["seq"]?.intValue)
        alice.close()
        XCTAssertTrue(alice.waitForClose() != nil)

        // While alice is away: bob and carol come, carol goes, dave comes; bob changes things.
        let (bob, _) = try TestClient.join(server, room: "r", name: "bob")
        let (carol, _) = try TestClient.join(server, room: "r", name: "carol")
        bob.intent("dragon.forward", id: "b1")
        bob.intent("heart.setRate", id: "b2", ["value": 0.9])
        carol.close()
        XCTAssertEqual(bob.next(type: "presence")?["joined"]?["name"]?.stringValue, "carol")
        XCTAssertEqual(bob.next(type: "presence")?["left"]?["name"]?.stringValue, "carol")
        let (dave, _) = try TestClient.join(server, room: "r", name: "dave")
        dave.intent("face.setHappiness", id: "d1", ["value": 30])
        XCTAssertEqual(dave.next(type: "ack")?["id"]?.stringValue, "d1")

        let (back, welcome) = try TestClient.join(server, room: "r", name: "alice",
                                                  since: UInt64(since), epoch: epoch)
        XCTAssertEqual(welcome["recovered"]?.boolValue, true)
        XCTAssertEqual(welcome["seq"]?.intValue, since + 3)
        XCTAssertEqual(Set(welcome["presence"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []),
                       ["bob", "dave", "alice"], "the welcome lists who is here now")
        XCTAssertEqual(welcome["presenceCount"]?.intValue, 3)

        // Everything the server queued for alice before this pong.
        back.send(#"{"type":"ping","id":"mark"}"#)
        var received: [JSONValue] = []
        while let message = back.next(timeout: 5), message["type"]?.stringValue != "pong" { received.append(message) }
        XCTAssertEqual(received.compactMap { $0["type"]?.stringValue }, ["event", "event", "event"],
                       "only the missed events, no presence: \(received)")
        XCTAssertEqual(received.compactMap { $0["seq"]?.intValue }, [since + 1, since + 2, since + 3])

        // Live presence still reaches the resumed client.
        let (erin, _) = try TestClient.join(server, room: "r", name: "erin")
        XCTAssertEqual(back.next(type: "presence")?["joined"]?["name"]?.stringValue, "erin")
        erin.close()
        XCTAssertEqual(back.next(type: "presence")?["left"]?["name"]?.stringValue, "erin")
        XCTAssertEqual(back.drain(for: 0.3).count, 0)
    }
}
