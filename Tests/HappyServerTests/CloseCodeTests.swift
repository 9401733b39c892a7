import Foundation
import HappyClientKit
import HappyCore
import XCTest

/// How and why the server closes WebSocket connections (PROTOCOL.md sections 2 and 5).
final class CloseCodeTests: XCTestCase {
    func testBinaryMessageCloses1003() throws {
        let server = try ServerProcess()
        let (client, _) = try TestClient.join(server)
        client.connection.send(bytes: Array(#"{"type":"ping"}"#.utf8), binary: true)
        XCTAssertEqual(client.waitForClose(), .some(1003))
        XCTAssertFalse(client.closeReason.isEmpty)
    }

    func testOversizeMessageCloses1009() throws {
        let server = try ServerProcess(["limits": ["maxMessageBytes": 256]])
        let (client, welcome) = try TestClient.join(server)
        XCTAssertEqual(welcome["limits"]?["maxMessageBytes"]?.intValue, 256)
        client.send(ProtocolFlowTests.paddedIntent(id: "x", happiness: 60, bytes: 257))
        XCTAssertEqual(client.waitForClose(), .some(1009))
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/state").json?["seq"]?.intValue, 0)
    }

    func testInvalidRoomOrNameIsClosed1008WithAReasonAfterTheUpgrade() throws {
        let server = try ServerProcess()
        let refusals: [(String, [(String, String?)])] = [
            ("room with a space", [("room", "bad room")]),
            ("room of 65 characters", [("room", String(repeating: "r", count: 65))]),
            ("empty room", [("room", "")]),
            ("name of 33 characters", [("name", String(repeating: "n", count: 33))]),
            ("name with a control character", [("name", "bell\u{07}")]),
            ("empty name", [("name", "")]),
        ]
        for (label, query) in refusals {
            let client = TestClient(url: server.wsURL, query: query)
            XCTAssertEqual(client.waitForClose(), .some(1008), label)
            XCTAssertTrue(client.didOpen, "\(label): the upgrade completes before the close")
            XCTAssertTrue(client.closeReason.contains(query[0].0), "\(label): the reason names the \(query[0].0): \(client.closeReason)")
            XCTAssertEqual(client.messagesBeforeClose()?.count, 0, "\(label): no welcome")
        }
        let (_, welcome) = try TestClient.join(server, room: String(repeating: "r", count: 64),
                                               name: String(repeating: "é", count: 32))
        XCTAssertEqual(welcome["you"]?["name"]?.stringValue, String(repeating: "é", count: 32),
                       "32 two-byte characters are a valid name")
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/state").json?["presenceCount"]?.intValue, 0,
                       "refused clients never joined the default room")
    }

    func testMaxClientsReachedCloses1013() throws {
        let server = try ServerProcess(["limits": ["maxClients": 2]])
        let (first, _) = try TestClient.join(server, room: "a")
        _ = try TestClient.join(server, room: "b")
        let third = try RawWebSocket(port: server.port, target: "/ws?room=a")
        XCTAssertTrue(third.upgraded, "the upgrade completes before the close: \(third.handshake)")
        let (close, texts) = third.readUntilClose()
        XCTAssertEqual(texts, [], "no welcome")
        guard case .close(let code, let reason)? = close else { return XCTFail("no close frame: \(String(describing: close))") }
        XCTAssertEqual(code, 1013)
        XCTAssertFalse(reason.isEmpty)

        first.close()
        _ = first.waitForClose()
        XCTAssertTrue(first.isClosed)
        let (_, welcome) = try TestClient.join(server, room: "a")
        XCTAssertEqual(welcome["presenceCount"]?.intValue, 1, "a freed seat can be taken again")
    }

    func testMaxRoomsReachedClosesANewRoom1013ButAnOccupiedRoomStillJoins() throws {
        let server = try ServerProcess(["limits": ["maxRooms": 2]])
        let (red, _) = try TestClient.join(server, room: "red")
        _ = try TestClient.join(server, room: "blue")
        XCTAssertEqual(try closeCode(port: server.port, room: "green"), 1013)

        let (_, welcome) = try TestClient.join(server, room: "red")
        XCTAssertEqual(welcome["presenceCount"]?.intValue, 2)

        red.close()
        _ = red.waitForClose()
        XCTAssertTrue(red.isClosed)
        let (_, stillRed) = try TestClient.join(server, room: "red")
        XCTAssertEqual(stillRed["presenceCount"]?.intValue, 2, "red is still occupied")
        XCTAssertEqual(try closeCode(port: server.port, room: "green"), 1013)
    }

    func testFloodGetsRateLimitedErrorsThen1008() throws {
        let server = try ServerProcess(["limits": ["intentsPerSecond": 0.1, "intentBurst": 2, "floodLimit": 5]])
        let (client, _) = try TestClient.join(server)
        var answers: [String] = []
        for index in 0..<20 {
            client.intent("dragon.toggleHidden", id: "t\(index)")
            guard let answer = nextAnswer(client) else { break }
            answers.append(answer["code"]?.stringValue ?? answer["result"]?.stringValue ?? "?")
        }
        XCTAssertEqual(answers.prefix(2), ["applied", "applied"], "the burst is served")
        XCTAssertEqual(answers.filter { $0 == "rate_limited" }.count, 5,
                       "floodLimit rate_limited errors, then the close: \(answers)")
        XCTAssertEqual(client.waitForClose(), .some(1008))
        XCTAssertFalse(client.closeReason.isEmpty)
    }

    func testBurstFloodIsAnsweredWithRateLimitedErrorsBeforeThe1008() throws {
        let server = try ServerProcess(["limits": ["intentsPerSecond": 0.1, "intentBurst": 2, "floodLimit": 5]])
        let (client, _) = try TestClient.join(server)
        for index in 0..<20 { client.intent("dragon.toggleHidden", id: "t\(index)") }
        XCTAssertEqual(client.waitForClose(), .some(1008))
        let received = try XCTUnwrap(client.messagesBeforeClose(), "closed")
        let errors = received.filter { $0["type"]?.stringValue == "error" }
        XCTAssertEqual(errors.count, 5, "every refused message before the close is answered: \(received)")
        XCTAssertTrue(errors.allSatisfy { $0["code"]?.stringValue == "rate_limited" })
        XCTAssertEqual(received.filter { $0["type"]?.stringValue == "ack" }.count, 2)
    }

    func testShutdownClosesClientsWith1001AndExitsZero() throws {
        let server = try ServerProcess()
        let (alice, _) = try TestClient.join(server)
        let (bob, _) = try TestClient.join(server, room: "other")
        alice.intent("face.setHappiness", id: "h", ["value": 90])
        XCTAssertEqual(alice.next(type: "ack")?["result"]?.stringValue, "applied")
        XCTAssertEqual(server.stop(), 0)
        XCTAssertEqual(alice.waitForClose(), .some(1001))
        XCTAssertEqual(bob.waitForClose(), .some(1001))
        XCTAssertFalse(server.isRunning)
    }

    func testUpgradeOnAnotherPathIsRefused() throws {
        let server = try ServerProcess()
        for path in ["/", "/wss", "/ws/x", "/api/state", "/echo"] {
            let client = TestClient(url: "ws://127.0.0.1:\(server.port)\(path)")
            _ = client.waitForClose()
            XCTAssertTrue(client.isClosed, path)
            XCTAssertFalse(client.didOpen, "\(path) must not be upgraded")
            XCTAssertNotNil(client.failure, path)
        }
        let raw = try RawWebSocket(port: server.port, target: "/chat")
        XCTAssertFalse(raw.upgraded)
        XCTAssertEqual(raw.handshake.split(separator: " ").dropFirst().first, "404", raw.handshake)
        let (_, welcome) = try TestClient.join(server)
        XCTAssertEqual(welcome["presenceCount"]?.intValue, 1)
    }

    /// The close code a new client of `room` is sent right after the upgrade.
    private func closeCode(port: Int, room: String) throws -> UInt16? {
        let socket = try RawWebSocket(port: port, target: "/ws?room=\(room)")
        XCTAssertTrue(socket.upgraded, socket.handshake)
        let (close, texts) = socket.readUntilClose()
        XCTAssertEqual(texts, [], "no welcome")
        guard case .close(let code, let reason)? = close else { return nil }
        XCTAssertFalse(reason.isEmpty, "a reason text")
        return code
    }

    private func nextAnswer(_ client: TestClient) -> JSONValue? {
        while let message = client.next(timeout: 2) {
            if ["ack", "error"].contains(message["type"]?.stringValue ?? "") { return message }
        }
        return nil
    }
}
