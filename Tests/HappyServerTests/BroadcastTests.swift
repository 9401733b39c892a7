import Foundation
import HappyCore
import XCTest

/// Several clients sharing rooms through a live server.
final class BroadcastTests: XCTestCase {
    func testTwoClientsSeeEachOthersEventsWithTheSameSeq() throws {
        let server = try ServerProcess()
        let (alice, welcomeA) = try TestClient.join(server, name: "alice")
        let (bob, _) = try TestClient.join(server, name: "bob")
        XCTAssertEqual(welcomeA["seq"]?.doubleValue, 0)
        XCTAssertEqual(alice.next(type: "presence")?["joined"]?["name"]?.stringValue, "bob")

        alice.intent("dragon.forward", id: "a1")
        let eventA = try XCTUnwrap(alice.next(type: "event"))
        let ack = try XCTUnwrap(alice.next(type: "ack"))
        let eventB = try XCTUnwrap(bob.next(type: "event"))
        XCTAssertEqual(eventA["seq"]?.doubleValue, 1)
        XCTAssertEqual(eventA["seq"], eventB["seq"])
        XCTAssertEqual(eventB["name"]?.stringValue, "forwardButtonClicked:")
        XCTAssertEqual(eventB["sender"]?["name"]?.stringValue, "alice")
        XCTAssertEqual(eventB["state"]?["dragon"]?["x"]?.doubleValue, 20)
        XCTAssertEqual(ack["id"]?.stringValue, "a1")
        XCTAssertEqual(ack["seq"]?.doubleValue, 1)
        XCTAssertEqual(ack["result"]?.stringValue, "applied")

        bob.intent("face.setHappiness", id: "b1", ["value": 80])
        XCTAssertEqual(alice.next(type: "event")?["seq"]?.doubleValue, 2)
        let bobEvent = try XCTUnwrap(bob.next(type: "event"))
        XCTAssertEqual(bobEvent["state"]?["face"]?["smile"]?.doubleValue, 0.6)
        XCTAssertEqual(bob.next(type: "ack")?["result"]?.stringValue, "applied")
    }

    func testRoomsAreIsolated() throws {
        let server = try ServerProcess()
        let (red, _) = try TestClient.join(server, room: "red")
        let (blue, _) = try TestClient.join(server, room: "blue")
        red.intent("heart.setRate", id: "r", ["value": 0.9])
        XCTAssertEqual(red.next(type: "ack")?["seq"]?.doubleValue, 1)
        blue.send(#"{"type":"ping","id":"p"}"#)
        let messages = blue.drain(for: 0.5).compactMap { $0["type"]?.stringValue }
        XCTAssertFalse(messages.contains("event"), "blue saw red's event: \(messages)")
        let state = try HTTP.get("\(server.httpBase)/api/state?room=blue").json
        XCTAssertEqual(state?["state"]?["heart"]?["rate"]?.doubleValue, 0.5)
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/state?room=red").json?["state"]?["heart"]?["rate"]?.doubleValue, 0.9)
    }
}
