import Foundation
import HappyClientKit
import HappyCore
import XCTest

/// The message flow of PROTOCOL.md sections 2–5 on one live server.
final class ProtocolFlowTests: XCTestCase {
    private var server: ServerProcess!

    override func setUpWithError() throws {
        server = try ServerProcess()
    }

    override func tearDown() {
        server = nil
    }

    func testWelcomeDescribesTheRoomTheClientAndTheDefaults() throws {
        let before = Contract.nowMilliseconds
        let (_, welcome) = try TestClient.join(server, room: "flow", name: "alice")
        let after = Contract.nowMilliseconds

        XCTAssertEqual(welcome["type"]?.stringValue, "welcome")
        XCTAssertEqual(welcome["protocol"]?.intValue, 1)
        XCTAssertEqual(welcome["room"]?.stringValue, "flow")
        let id = try XCTUnwrap(welcome["you"]?["id"]?.stringValue)
        XCTAssertFalse(id.isEmpty)
        XCTAssertEqual(welcome["you"]?["name"]?.stringValue, "alice")
        XCTAssertEqual(welcome["you"]?["role"]?.stringValue, "player")
        XCTAssertFalse(try XCTUnwrap(welcome["epoch"]?.stringValue).isEmpty)
        XCTAssertEqual(welcome["seq"]?.intValue, 0)
        XCTAssertJSONEqual(welcome["state"], Contract.defaultState)
        XCTAssertJSONEqual(welcome["scene"], Contract.defaultGeometry)
        XCTAssertJSONEqual(welcome["presence"], .array([.object([("id", .string(id)), ("name", .string("alice"))])]))
        XCTAssertEqual(welcome["presenceCount"]?.intValue, 1)
        let serverTime = try XCTUnwrap(welcome["serverTime"]?.doubleValue)
        XCTAssertGreaterThanOrEqual(serverTime, before - 1000)
        XCTAssertLessThanOrEqual(serverTime, after + 1000)
        XCTAssertEqual(welcome["recovered"]?.boolValue, false)
        XCTAssertJSONEqual(welcome["limits"], Contract.defaultLimits)

        let (_, second) = try TestClient.join(server, room: "flow")
        let secondID = try XCTUnwrap(second["you"]?["id"]?.stringValue)
        XCTAssertNotEqual(secondID, id)
        let defaultName = try XCTUnwrap(second["you"]?["name"]?.stringValue)
        XCTAssertTrue(defaultName.hasPrefix("guest-"), "default display name: \(defaultName)")
        XCTAssertEqual(second["presenceCount"]?.intValue, 2)
        let names = Set(second["presence"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? [])
        XCTAssertEqual(names, ["alice", defaultName])
        XCTAssertEqual(second["epoch"], welcome["epoch"])
    }

    func testSubprotocolIsSelectedWhenOfferedAndOptional() throws {
        let (offering, _) = try TestClient.join(server)
        XCTAssertEqual(offering.subprotocol, "happy.v1")

        let (plain, welcome) = try TestClient.join(server, options: WebSocketOptions(subprotocol: nil))
        XCTAssertNil(plain.subprotocol)
        XCTAssertEqual(welcome["protocol"]?.intValue, 1)
        plain.intent("heart.setRate", id: "r1", ["value": 0.25])
        XCTAssertEqual(plain.next(type: "ack")?["result"]?.stringValue, "applied")
    }

    func testAckComesAfterTheEventItCaused() throws {
        let (alice, welcome) = try TestClient.join(server, name: "alice")
        let me = try XCTUnwrap(welcome["you"]?["id"]?.stringValue)

        alice.intent("face.setHappiness", id: "h1", ["value": 80])
        let event = try XCTUnwrap(alice.next())
        XCTAssertEqual(event["type"]?.stringValue, "event")
        XCTAssertEqual(event["seq"]?.intValue, 1)
        XCTAssertEqual(event["room"]?.stringValue, "lobby")
        XCTAssertEqual(event["name"]?.stringValue, "faceView:didChangeHappiness:")
        XCTAssertJSONEqual(event["sender"], .object([("id", .string(me)), ("name", .string("alice"))]))
        XCTAssertJSONEqual(event["changes"], .parse("""
            [ { "path": "face.happiness", "from": 50, "to": 80 }, { "path": "face.smile", "from": 0, "to": 0.6 } ]
            """))
        XCTAssertEqual(event["state"]?["face"]?["happiness"]?.intValue, 80)
        XCTAssertEqual(event["state"]?["face"]?["smile"]?.doubleValue, 0.6)
        XCTAssertNotNil(event["time"]?.intValue)
        let ack = try XCTUnwrap(alice.next())
        XCTAssertJSONEqual(ack, .parse(#"{ "type": "ack", "id": "h1", "seq": 1, "result": "applied" }"#))

        alice.intent("face.setHappiness", id: "h2", ["value": 150])
        XCTAssertEqual(alice.next()?["state"]?["face"]?["happiness"]?.intValue, 100)
        XCTAssertJSONEqual(alice.next(), .parse(#"{ "type": "ack", "id": "h2", "seq": 2, "result": "clamped" }"#))
    }

    func testIntentThatChangesNothingIsAcknowledgedWithoutAnEvent() throws {
        let (client, _) = try TestClient.join(server)
        client.intent("dragon.setHidden", id: "s1", ["value": false])
        XCTAssertJSONEqual(client.next(), .parse(#"{ "type": "ack", "id": "s1", "seq": 0, "result": "unchanged" }"#))
        client.intent("room.reset", id: "s2")
        XCTAssertJSONEqual(client.next(), .parse(#"{ "type": "ack", "id": "s2", "seq": 0, "result": "unchanged" }"#))
        client.intent("face.setHappiness", id: "s3", ["value": -5])
        XCTAssertEqual(client.next()?["type"]?.stringValue, "event")
        XCTAssertEqual(client.next()?["result"]?.stringValue, "clamped")
        client.intent("face.setHappiness", id: "s4", ["value": -9])
        XCTAssertJSONEqual(client.next(), .parse(#"{ "type": "ack", "id": "s4", "seq": 1, "result": "unchanged" }"#),
                           "a clamped value equal to the current one is unchanged")
        XCTAssertEqual(client.drain(for: 0.3).count, 0)
    }

    func testDragonBackAtTheLeftEdgeIsAnEventWithNoChangesAndABlockedAck() throws {
        let (client, _) = try TestClient.join(server)
        client.intent("dragon.back", id: "b1")
        let event = try XCTUnwrap(client.next())
        XCTAssertEqual(event["type"]?.stringValue, "event")
        XCTAssertEqual(event["name"]?.stringValue, "backButtonClicked:")
        XCTAssertEqual(event["seq"]?.intValue, 1)
        XCTAssertEqual(event["changes"], .array([]))
        XCTAssertJSONEqual(event["state"], Contract.defaultState)
        XCTAssertJSONEqual(client.next(), .parse(#"{ "type": "ack", "id": "b1", "seq": 1, "result": "blocked" }"#))
    }

    func testEveryErrorCodeOverTheSocketLeavesTheConnectionOpen() throws {
        let (client, _) = try TestClient.join(server)
        let cases: [(String, String, String?)] = [
            ("{not json", "bad_json", nil),
            (#"{"type":"intent","id":"n1","action":"heart.setRate","value":NaN}"#, "bad_json", nil),
            ("[1,2,3]", "bad_message", nil),
            (#"{"type":"hello","id":"m1"}"#, "bad_message", "m1"),
            (#"{"id":"m2"}"#, "bad_message", "m2"),
            (#"{"type":"intent","id":"u1","action":"face.explode"}"#, "unknown_action", "u1"),
            (#"{"type":"intent","id":"v1","action":"face.setHappiness","value":"high"}"#, "invalid_value", "v1"),
            (#"{"type":"intent","id":"v2","action":"face.setHappiness","value":50.5}"#, "invalid_value", "v2"),
            (#"{"type":"intent","id":"v3","action":"face.nudgeHappiness","delta":101}"#, "invalid_value", "v3"),
            (#"{"type":"intent","id":"v4","action":"face.pinch","factor":0}"#, "invalid_value", "v4"),
            (#"{"type":"intent","id":"v5","action":"heart.setStyle","lineWidth":21}"#, "invalid_value", "v5"),
            (#"{"type":"intent","id":"v6","action":"heart.setStyle","fillColor":"red"}"#, "invalid_value", "v6"),
            (#"{"type":"intent","id":"v7","action":"dragon.setHidden"}"#, "invalid_value", "v7"),
        ]
        for (text, code, id) in cases {
            client.send(text)
            let error = try XCTUnwrap(client.next(), "no answer to \(text)")
            XCTAssertEqual(error["type"]?.stringValue, "error", text)
            XCTAssertEqual(error["code"]?.stringValue, code, text)
            XCTAssertEqual(error["id"]?.stringValue, id, text)
            XCTAssertFalse((error["message"]?.stringValue ?? "").isEmpty, text)
        }
        XCTAssertFalse(client.isClosed)

        let before = Contract.nowMilliseconds
        client.send(#"{"type":"ping","id":"p1"}"#)
        let pong = try XCTUnwrap(client.next())
        XCTAssertEqual(pong["type"]?.stringValue, "pong")
        XCTAssertEqual(pong["id"]?.stringValue, "p1")
        let serverTime = try XCTUnwrap(pong["serverTime"]?.doubleValue)
        XCTAssertEqual(serverTime, before, accuracy: 2000)

        let state = try HTTP.get("\(server.httpBase)/api/state").json
        XCTAssertEqual(state?["seq"]?.intValue, 0, "no refused message changed the scene")
        XCTAssertJSONEqual(state?["state"], Contract.defaultState)
    }

    func testFragmentedTextMessageIsReassembled() throws {
        let (client, _) = try TestClient.join(server)
        client.connection.send(fragments: [#"{"type":"intent","#, #""id":"f1","action":"face.set"#, #"Happiness","value":77}"#])
        let event = try XCTUnwrap(client.next())
        XCTAssertEqual(event["type"]?.stringValue, "event")
        XCTAssertEqual(event["state"]?["face"]?["happiness"]?.intValue, 77)
        XCTAssertJSONEqual(client.next(), .parse(#"{ "type": "ack", "id": "f1", "seq": 1, "result": "applied" }"#))
    }

    func testMessageOfExactlyMaxMessageBytesIsAcceptedAndOneByteMoreCloses1009() throws {
        let limit = 4096
        let (client, _) = try TestClient.join(server)
        let exact = Self.paddedIntent(id: "big", happiness: 66, bytes: limit)
        XCTAssertEqual(exact.utf8.count, limit)
        client.send(exact)
        XCTAssertEqual(client.next(type: "event")?["state"]?["face"]?["happiness"]?.intValue, 66)
        XCTAssertJSONEqual(client.next(type: "ack"), .parse(#"{ "type": "ack", "id": "big", "seq": 1, "result": "applied" }"#))

        let fragmented = Self.paddedIntent(id: "frag", happiness: 67, bytes: limit)
        let bytes = Array(fragmented.utf8)
        client.connection.send(fragments: [String(decoding: bytes[..<1000], as: UTF8.self),
                                           String(decoding: bytes[1000...], as: UTF8.self)])
        XCTAssertEqual(client.next(type: "ack")?["id"]?.stringValue, "frag",
                       "a fragmented message of exactly the limit is accepted after reassembly")

        let over = Self.paddedIntent(id: "over", happiness: 68, bytes: limit + 1)
        XCTAssertEqual(over.utf8.count, limit + 1)
        client.send(over)
        XCTAssertEqual(client.waitForClose(), .some(1009))
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/state").json?["seq"]?.intValue, 2)
    }

    /// A valid intent padded with an unknown field to exactly `bytes` UTF-8
    /// bytes; the padding mixes two-byte characters with ASCII.
    static func paddedIntent(id: String, happiness: Int, bytes: Int) -> String {
        let head = #"{"type":"intent","id":"\#(id)","action":"face.setHappiness","value":\#(happiness),"pad":""#
        let tail = #""}"#
        var room = bytes - head.utf8.count - tail.utf8.count
        let wide = String(repeating: "é", count: room / 4)
        room -= wide.utf8.count
        return head + wide + String(repeating: "x", count: room) + tail
    }
}
