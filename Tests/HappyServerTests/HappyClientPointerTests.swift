import Foundation
import HappyCore
import XCTest

/// Live pointers (PROTOCOL.md section 10) in `happyclient`: `play` under
/// tmux shows another client's marker and who is steering, and shows its own
/// keys' pointer to the others; `watch --pointers` prints the batches.
final class HappyClientPointerTests: XCTestCase {
    private var server: ServerProcess!
    private var tmux: TmuxSession?

    override func setUpWithError() throws {
        server = try ServerProcess()
    }

    override func tearDown() {
        tmux = nil
        server = nil
    }

    private var url: String { "ws://127.0.0.1:\(server.port)" }

    private func pointer(_ view: String?, _ x: Double = 0.5, _ y: Double = 0.5, activity: String = "idle") -> [String: Any] {
        ["type": "pointer", "view": view ?? NSNull(), "x": x, "y": y, "activity": activity]
    }

    private func lines(_ screen: String) -> [String] {
        screen.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// The `pointers` batches `client` receives until one satisfies `match`, within `timeout`.
    private func waitForBatch(_ client: TestClient, timeout: Double = 10, _ match: (JSONValue) -> Bool) -> JSONValue? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            guard let batch = client.next(type: "pointers", timeout: deadline.timeIntervalSinceNow) else { return nil }
            if match(batch) { return batch }
        }
        return nil
    }

    private func hasLine(_ output: String, matching pattern: String) -> Bool {
        lines(output).contains { $0.range(of: pattern, options: .regularExpression) != nil }
    }

    private func entries(_ batch: JSONValue) -> [JSONValue] {
        if case .array(let list)? = batch["pointers"] { return list }
        return []
    }

    private func gone(_ batch: JSONValue) -> [String] {
        if case .array(let list)? = batch["gone"] { return list.compactMap(\.stringValue) }
        return []
    }

    // MARK: play

    func testPlayShowsAnotherClientsMarkerAndWhoIsSteeringAndShowsItsOwnKeys() throws {
        let tmux = try TmuxSession(columns: 120, rows: 40, environment: ["COLORTERM": "truecolor", "TERM": "xterm-256color"])
        self.tmux = tmux
        let (alice, _) = try TestClient.join(server, room: "t", name: "alice")
        try tmux.type("'\(ClientProcess.binary.path)' play --url \(url) --room t --name player; echo \"exit=$?\"")
        let (ready, start) = tmux.waitForScreen { $0.contains("here (2):") && $0.contains("steering: nobody") }
        XCTAssertTrue(ready, "play did not show the room:\n\(start)")

        // Alice drags on the middle of the face: her initial over the face, and the steering line.
        alice.send(json: pointer("face", 0.5, 0.5, activity: "drag"))
        let (steered, screen) = tmux.waitForScreen { $0.contains("steering: alice (face, drag)") }
        XCTAssertTrue(steered, "no steering line:\n\(screen)")
        // 40 rows: the title, 34 picture rows, then five text rows. The picture is half blocks and
        // spaces, so a letter in it is a marker; the face is the left third of the composite.
        let picture = Array(lines(screen).dropFirst().prefix(34))
        let markers = picture.enumerated().compactMap { row, line -> (row: Int, column: Int)? in
            guard let index = line.firstIndex(of: "A") else { return nil }
            return (row, line.distance(from: line.startIndex, to: index))
        }
        XCTAssertEqual(markers.count, 1, "one marker:\n\(screen)")
        if let marker = markers.first {
            XCTAssertLessThan(marker.column, 40, "over the face, the left third:\n\(screen)")
            XCTAssertGreaterThan(marker.column, 5, "in the middle of the face:\n\(screen)")
        }
        XCTAssertTrue(picture.joined().contains("▀"), "the picture is drawn around it")

        // This client's keys show its pointer to Alice: a dragon button press, hidden a moment later.
        try tmux.press("Right")
        let pressed = waitForBatch(alice) { batch in
            self.entries(batch).contains { $0["name"]?.stringValue == "player" }
        }
        let own = try XCTUnwrap(pressed.flatMap { entries($0).first { $0["name"]?.stringValue == "player" } },
                                "alice never saw the player's pointer")
        XCTAssertEqual(own["view"]?.stringValue, "dragon")
        XCTAssertEqual(own["activity"]?.stringValue, "press")
        XCTAssertGreaterThan(own["x"]?.doubleValue ?? 0, 0.5, "at the forward button, on the right")
        let playerID = try XCTUnwrap(own["id"]?.stringValue)
        let hidden = waitForBatch(alice) { self.gone($0).contains(playerID) }
        XCTAssertNotNil(hidden, "the player's pointer was not hidden after its last key")

        // Alice hides hers: the marker goes and nobody steers.
        alice.send(json: pointer(nil))
        let (cleared, after) = tmux.waitForScreen { $0.contains("steering: nobody") }
        XCTAssertTrue(cleared, after)
        XCTAssertFalse(lines(after).dropFirst().prefix(34).joined().contains("A"), "the marker is gone:\n\(after)")

        try tmux.press("q")
        let (ended, shell) = tmux.waitForScreen { self.lines($0).contains("exit=0") }
        XCTAssertTrue(ended, shell)
    }

    // MARK: watch --pointers

    func testWatchPointersPrintsTheShownPointersThenEachMoveAndGone() throws {
        let (alice, welcome) = try TestClient.join(server, room: "w", name: "alice")
        let aliceID = try XCTUnwrap(welcome["you"]?["id"]?.stringValue)
        alice.send(json: pointer("face", 0.42, 0.61, activity: "drag"))
        XCTAssertNotNil(alice.drainUntilPong(), "the server has taken the pointer in")

        let watch = try ClientProcess(["--url", url, "--room", "w", "watch", "--pointers"])
        XCTAssertTrue(watch.waitForOutput { _, err in err.contains("watching room w") }, watch.stderr)
        let time = #"^\d\d:\d\d:\d\d "#
        let shown = time + #"pointer alice \(\#(aliceID)\)  face \(0\.42, 0\.61\) drag$"#
        XCTAssertTrue(watch.waitForOutput { out, _ in self.hasLine(out, matching: shown) },
                      "the pointer shown at join: \(watch.stdout)")

        alice.send(json: pointer("heart", 0.25, 0.75, activity: "press"))
        let moved = time + #"pointer alice \(\#(aliceID)\)  heart \(0\.25, 0\.75\) press$"#
        XCTAssertTrue(watch.waitForOutput { out, _ in self.hasLine(out, matching: moved) },
                      "a batch: \(watch.stdout)")
        alice.send(json: pointer(nil))
        XCTAssertTrue(watch.waitForOutput { out, _ in out.contains("pointer alice (\(aliceID))  gone") }, watch.stdout)

        watch.signal(SIGINT)
        let outcome = watch.finish()
        XCTAssertEqual(outcome.status, 130)
        XCTAssertEqual(outcome.lines.filter { $0.contains(" pointer ") }.count, 3, outcome.stdout)
    }

    func testWatchPointersWithJSONPrintsTheBatchesAsReceived() throws {
        let watch = try ClientProcess(["--url", url, "--room", "j", "watch", "--json", "--pointers"])
        XCTAssertTrue(watch.waitForOutput { _, err in err.contains("watching room j") }, watch.stderr)
        let (alice, welcome) = try TestClient.join(server, room: "j", name: "alice")
        let aliceID = try XCTUnwrap(welcome["you"]?["id"]?.stringValue)
        alice.send(json: pointer("dragon", 0.9, 0.1, activity: "press"))
        XCTAssertTrue(watch.waitForOutput { out, _ in out.contains(#""type":"pointers""#) }, watch.stdout)
        watch.signal(SIGTERM)
        let outcome = watch.finish()
        XCTAssertEqual(outcome.status, 143)
        let batches = try outcome.lines.map { try JSONParser.parse($0, maxDepth: 64) }
            .filter { $0["type"]?.stringValue == "pointers" }
        let batch = try XCTUnwrap(batches.first)
        XCTAssertEqual(batch["room"]?.stringValue, "j")
        XCTAssertJSONEqual(entries(batch).first, .object([
            ("id", .string(aliceID)), ("name", .string("alice")), ("view", .string("dragon")),
            ("x", .number(0.9)), ("y", .number(0.1)), ("activity", .string("press"))]))
    }
}
