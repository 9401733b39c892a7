import Foundation
import HappyCore
import XCTest

/// `persistence.enabled: false`: rooms live in memory only. They work as
/// usual while the server runs, nothing of them is written under `dataDir`
/// (only the operator key), and a restart starts every room afresh under a new epoch.
final class PersistenceDisabledTests: XCTestCase {
    func testRoomsAreKeptWhileRunningAndGoneAfterARestart() throws {
        let server = try ServerProcess(["persistence": ["enabled": false]])
        let dataDir = server.directory.appendingPathComponent("data")
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/healthz").text, "ok")

        let (alice, welcome) = try TestClient.join(server, room: "volatile", name: "alice")
        let epoch = try XCTUnwrap(welcome["epoch"]?.stringValue)
        alice.intent("face.setHappiness", id: "h", ["value": 90])
        alice.intent("dragon.forward", id: "f")
        XCTAssertEqual(alice.next(type: "ack")?["id"]?.stringValue, "h")
        XCTAssertEqual(alice.next(type: "ack")?["id"]?.stringValue, "f")
        alice.close()
        XCTAssertTrue(alice.waitForClose() != nil)

        // Kept while running: a later client resumes and the HTTP API reads it.
        let (bob, later) = try TestClient.join(server, room: "volatile", since: 1, epoch: epoch)
        XCTAssertEqual(later["recovered"]?.boolValue, true)
        XCTAssertEqual(later["seq"]?.intValue, 2)
        XCTAssertEqual(later["state"]?["face"]?["happiness"]?.intValue, 90)
        XCTAssertEqual(bob.next(type: "event")?["seq"]?.intValue, 2, "history is kept in memory too")
        let state = try XCTUnwrap(HTTP.get("\(server.httpBase)/api/state?room=volatile").json)
        XCTAssertEqual(state["seq"]?.intValue, 2)
        XCTAssertEqual(state["state"]?["dragon"]?["x"]?.intValue, 20)
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/healthz").text, "ok")
        XCTAssertTrue(server.logText.contains("persistence disabled"), server.logText)
        bob.close()

        XCTAssertEqual(server.stop(), 0)
        XCTAssertEqual(filesUnder(dataDir), ["operator.key"], "nothing of the rooms written under dataDir")
        try server.start()
        let (_, fresh) = try TestClient.join(server, room: "volatile", since: 2, epoch: epoch)
        XCTAssertEqual(fresh["seq"]?.intValue, 0, "the room is gone after a restart")
        XCTAssertNotEqual(fresh["epoch"]?.stringValue, epoch, "a new epoch: its history was lost")
        XCTAssertEqual(fresh["recovered"]?.boolValue, false)
        XCTAssertJSONEqual(fresh["state"], Contract.defaultState)
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/healthz").text, "ok")
        XCTAssertEqual(filesUnder(dataDir), ["operator.key"])
    }

    /// Every file below `directory` (none when it does not exist).
    private func filesUnder(_ directory: URL) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: directory.path) else { return [] }
        return enumerator.compactMap { $0 as? String }
    }
}
