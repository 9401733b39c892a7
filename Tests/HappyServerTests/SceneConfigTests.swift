import Foundation
import HappyCore
import XCTest

/// The `scene.*` keys of `config.json` (PROTOCOL.md section 9): a new room's
/// defaults and `room.reset`, the geometry in `welcome.scene`, the dragon's
/// edges, and the scale range.
final class SceneConfigTests: XCTestCase {
    private var server: ServerProcess!

    /// Every scene key away from its default.
    private static var scene: [String: Any] { [
        "happiness": 70, "scale": 1.2, "scaleMin": 0.5, "scaleMax": 1.5, "rate": 0.25,
        "fillColor": "#00AA33", "strokeColor": "#123456", "lineWidth": 3, "dragonX": 7, "dragonY": 20,
        "width": 250, "height": 140, "dragonSize": 60, "step": 15,
    ] }

    /// The scene those keys describe, colours lower-cased and the smile derived.
    private static let configuredState = JSONValue.parse("""
        { "face":   { "happiness": 70, "smile": 0.4, "scale": 1.2 },
          "heart":  { "rate": 0.25, "fillColor": "#00aa33", "strokeColor": "#123456", "lineWidth": 3 },
          "dragon": { "x": 7, "y": 20, "hidden": false } }
        """)

    override func setUpWithError() throws {
        server = try ServerProcess(["scene": Self.scene])
    }

    override func tearDown() {
        server = nil
    }

    func testANewRoomStartsFromTheConfiguredSceneAndGeometry() throws {
        let (_, welcome) = try TestClient.join(server, room: "fresh")
        XCTAssertEqual(welcome["seq"]?.intValue, 0)
        XCTAssertJSONEqual(welcome["state"], Self.configuredState)
        XCTAssertJSONEqual(welcome["scene"], .parse(#"{ "width": 250, "height": 140, "dragonSize": 60, "step": 15 }"#))
        let state = try XCTUnwrap(HTTP.get("\(server.httpBase)/api/state?room=other").json)
        XCTAssertJSONEqual(state["state"], Self.configuredState, "a room read over HTTP starts the same way")
    }

    func testTheDragonStopsAtTheEdgesOfTheConfiguredScene() throws {
        let (client, _) = try TestClient.join(server, room: "edges")
        let width = 250.0, size = 60.0, step = 15.0
        // PROTOCOL.md section 4: forward while x + step < width − dragonSize.
        var expected: [Double] = []
        var x = 7.0
        while x + step < width - size { x += step; expected.append(x) }
        XCTAssertEqual(expected.last, 187, "the rule's last position for this geometry")

        for (index, wanted) in expected.enumerated() {
            client.intent("dragon.forward", id: "f\(index)")
            let event = try XCTUnwrap(client.next(type: "event"))
            XCTAssertEqual(event["state"]?["dragon"]?["x"]?.doubleValue, wanted)
            XCTAssertEqual(event["state"]?["dragon"]?["y"]?.doubleValue, 20, "y stays at dragonY")
            XCTAssertEqual(client.next(type: "ack")?["result"]?.stringValue, "applied")
        }
        client.intent("dragon.forward", id: "edge")
        let blocked = try XCTUnwrap(client.next(type: "event"))
        XCTAssertEqual(blocked["name"]?.stringValue, "forwardButtonClicked:")
        XCTAssertEqual(blocked["changes"]?.arrayValue?.count, 0)
        XCTAssertEqual(blocked["state"]?["dragon"]?["x"]?.doubleValue, 187)
        let ack = try XCTUnwrap(client.next(type: "ack"))
        XCTAssertEqual(ack["id"]?.stringValue, "edge")
        XCTAssertEqual(ack["result"]?.stringValue, "blocked")
        XCTAssertEqual(ack["seq"], blocked["seq"])

        // Back while x − step > 0: down to 7, then blocked.
        var back = 187.0
        var count = 0
        while back - step > 0 {
            back -= step
            client.intent("dragon.back", id: "b\(count)")
            XCTAssertEqual(client.next(type: "event")?["state"]?["dragon"]?["x"]?.doubleValue, back)
            XCTAssertEqual(client.next(type: "ack")?["result"]?.stringValue, "applied")
            count += 1
        }
        XCTAssertEqual(back, 7)
        client.intent("dragon.back", id: "left-edge")
        XCTAssertEqual(client.next(type: "event")?["name"]?.stringValue, "backButtonClicked:")
        XCTAssertEqual(client.next(type: "ack")?["result"]?.stringValue, "blocked")
    }

    func testScaleIsClampedToTheConfiguredRange() throws {
        let (client, _) = try TestClient.join(server, room: "scale")
        let cases: [(action: String, parameters: [String: Any], result: String, scale: Double)] = [
            ("face.setScale", ["value": 5], "clamped", 1.5),
            ("face.setScale", ["value": 0.01], "clamped", 0.5),
            ("face.setScale", ["value": 1.0], "applied", 1.0),
            ("face.pinch", ["factor": 10], "clamped", 1.5),
            ("face.pinch", ["factor": 0.1], "clamped", 0.5),
            ("face.setScale", ["value": 0.2], "unchanged", 0.5),
        ]
        for (index, step) in cases.enumerated() {
            client.intent(step.action, id: "s\(index)", step.parameters)
            let ack = try XCTUnwrap(client.next(type: "ack"), "\(step)")
            XCTAssertEqual(ack["id"]?.stringValue, "s\(index)")
            XCTAssertEqual(ack["result"]?.stringValue, step.result, "\(step)")
            let state = try XCTUnwrap(HTTP.get("\(server.httpBase)/api/state?room=scale").json)
            XCTAssertEqual(state["state"]?["face"]?["scale"]?.doubleValue, step.scale, "\(step)")
        }
    }

    func testResetReturnsToTheConfiguredDefaults() throws {
        let (client, _) = try TestClient.join(server, room: "reset")
        client.intent("face.setHappiness", id: "h", ["value": 5])
        client.intent("heart.setStyle", id: "c", ["fillColor": "#ffffff", "lineWidth": 9])
        client.intent("dragon.forward", id: "f")
        client.intent("dragon.setHidden", id: "d", ["value": true])
        XCTAssertEqual(try answers(client, until: "d").filter { $0["type"]?.stringValue == "event" }.count, 4)

        client.intent("room.reset", id: "r1")
        let event = try XCTUnwrap(client.next(type: "event"))
        XCTAssertEqual(event["name"]?.stringValue, "room:didReset:")
        XCTAssertJSONEqual(event["state"], Self.configuredState)
        XCTAssertEqual(client.next(type: "ack")?["result"]?.stringValue, "applied")
        client.intent("room.reset", id: "r2")
        XCTAssertEqual(client.next(type: "ack")?["result"]?.stringValue, "unchanged", "already at the configured defaults")
        XCTAssertJSONEqual(try HTTP.get("\(server.httpBase)/api/state?room=reset").json?["state"], Self.configuredState)
    }

    private func answers(_ client: TestClient, until id: String) throws -> [JSONValue] {
        var seen: [JSONValue] = []
        while true {
            let message = try XCTUnwrap(client.next(timeout: 5), "no ack \(id)")
            seen.append(message)
            if message["type"]?.stringValue == "ack", message["id"]?.stringValue == id { return seen }
        }
    }
}
