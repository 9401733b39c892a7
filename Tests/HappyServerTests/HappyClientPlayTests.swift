import Foundation
import HappyCore
import XCTest

/// `happyclient play` in a real terminal: a detached tmux session of a
/// fixed size, keys sent with `tmux send-keys`, the screen read back with
/// `tmux capture-pane`.
final class HappyClientPlayTests: XCTestCase {
    private var server: ServerProcess!
    private var tmux: TmuxSession!
    private let marker = "MARKER-\(UUID().uuidString.prefix(6))"

    override func setUpWithError() throws {
        server = try ServerProcess()
        tmux = try TmuxSession(columns: 120, rows: 40, environment: ["COLORTERM": "truecolor", "TERM": "xterm-256color"])
    }

    override func tearDown() {
        tmux = nil
        server = nil
    }

    /// Lines of the pane's text.
    private func lines(_ screen: String) -> [String] {
        screen.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// The exit status `play` left in the pane (`exit=N` on a line of its own), if it ended.
    private func exitLine(_ screen: String) -> String? {
        lines(screen).first { $0.range(of: #"^exit=\d+$"#, options: .regularExpression) != nil }
    }

    /// The shell is back: the marker's output line is on the screen and the play screen is gone.
    private func assertShellRestored(_ screen: String, status: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(exitLine(screen), "exit=\(status)", screen, file: file, line: line)
        XCTAssertTrue(lines(screen).contains(marker), "the shell's screen is back:\n\(screen)", file: file, line: line)
        XCTAssertFalse(screen.contains("q quit"), "the alternate screen is gone:\n\(screen)", file: file, line: line)
    }

    /// Starts `play` in the pane after echoing the marker; the exit status is echoed after it.
    private func startPlay(_ extra: [String] = []) throws {
        let arguments = (["play", "--url", "ws://127.0.0.1:\(server.port)", "--room", "t", "--name", "player"] + extra)
            .joined(separator: " ")
        try tmux.type("echo \(marker); '\(ClientProcess.binary.path)' \(arguments); echo \"exit=$?\"")
    }

    private func dragonX() throws -> Double? {
        try HTTP.get("\(server.httpBase)/api/state?room=t").json?["state"]?["dragon"]?["x"]?.doubleValue
    }

    private func waitForDragonX(_ x: Double) throws -> Bool {
        let deadline = Date(timeIntervalSinceNow: 10)
        while Date() < deadline {
            if try dragonX() == x { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return false
    }

    /// Before, play reconnected after an operator's kick (PROTOCOL.md section 13).
    func testAKickEndsPlayWithTheReasonAndRestoresTheTerminal() throws {
        try startPlay()
        let (ready, start) = tmux.waitForScreen { $0.contains("here (1):") && $0.contains("dragon's status") }
        XCTAssertTrue(ready, "play did not show the room:\n\(start)")
        let kick = try HTTP.post("\(server.httpBase)/api/rooms/t/kick", body: #"{"name":"player","reason":"tmux test"}"#,
                                 headers: server.operatorHeaders)
        XCTAssertEqual(kick.json?["kicked"]?.doubleValue, 1)
        let (ended, screen) = tmux.waitForScreen { self.exitLine($0) != nil }
        XCTAssertTrue(ended, "play did not end:\n\(screen)")
        assertShellRestored(screen, status: "65")
        XCTAssertTrue(screen.contains("happyclient: removed from the room by an operator: tmux test (close 4003)"), screen)
    }

    func testAKeyMovesTheDragonOnTheServerAndQRestoresTheTerminal() throws {
        let (observer, _) = try TestClient.join(server, room: "t", name: "observer")
        try startPlay()
        let (ready, start) = tmux.waitForScreen { $0.contains("here (2):") && $0.contains("dragon's status") }
        XCTAssertTrue(ready, "play did not show the room:\n\(start)")
        XCTAssertTrue(start.contains("player (you)"), start)
        XCTAssertTrue(start.contains("observer"), start)
        XCTAssertTrue(start.contains("←/→ dragon  ↑/↓ happiness  +/- scale  [ ] heart rate  h hide  q quit"), start)
        XCTAssertTrue(start.contains("▀"), "the picture is drawn in half blocks:\n\(start)")
        XCTAssertFalse(lines(start).contains(marker), "the alternate screen hides the shell")

        try tmux.press("Right")
        XCTAssertTrue(try waitForDragonX(20), "the server's dragon did not move")
        let event = observer.next(type: "event")
        XCTAssertEqual(event?["name"]?.stringValue, "forwardButtonClicked:")
        XCTAssertEqual(event?["sender"]?["name"]?.stringValue, "player")
        let (moved, screen) = tmux.waitForScreen { $0.contains("player: forward, (x,y) = (20, 10)") }
        XCTAssertTrue(moved, "the status label did not change:\n\(screen)")
        XCTAssertTrue(screen.contains("dragon (20, 10) shown"), screen)

        observer.intent("face.setHappiness", id: "o", ["value": 90])
        let (seen, _) = tmux.waitForScreen { $0.contains("happiness 90") }
        XCTAssertTrue(seen, "another client's change shows")

        try tmux.press("q")
        let (_, shell) = tmux.waitForScreen { self.exitLine($0) != nil }
        assertShellRestored(shell, status: "0")
    }

    func testKeysChangeHappinessScaleRateAndHiding() throws {
        try startPlay()
        XCTAssertTrue(tmux.waitForScreen { $0.contains("here (1):") }.0)
        try tmux.press("Up")
        XCTAssertTrue(tmux.waitForScreen { $0.contains("last: applied  happiness 55") }.0)
        try tmux.press("+")
        XCTAssertTrue(tmux.waitForScreen { $0.contains("last: applied  scale 0.99") }.0)
        try tmux.press("]")
        XCTAssertTrue(tmux.waitForScreen { $0.contains("last: applied  heart rate 0.6") }.0)
        try tmux.press("h")
        XCTAssertTrue(tmux.waitForScreen { $0.contains("player: hide") }.0)
        let state = try XCTUnwrap(HTTP.get("\(server.httpBase)/api/state?room=t").json?["state"])
        XCTAssertEqual(state["face"]?["happiness"]?.intValue, 55)
        XCTAssertEqual(state["heart"]?["rate"]?.doubleValue, 0.6)
        XCTAssertEqual(state["dragon"]?["hidden"]?.boolValue, true)
        try tmux.press("q")
        let (_, shell) = tmux.waitForScreen { self.exitLine($0) != nil }
        assertShellRestored(shell, status: "0")
    }

    func testCtrlCRestoresTheTerminal() throws {
        try startPlay(["--plain"])
        let (ready, screen) = tmux.waitForScreen { $0.contains("here (1):") }
        XCTAssertTrue(ready, screen)
        XCTAssertFalse(screen.contains("▀"), "--plain draws no blocks")
        try tmux.press("C-c")
        let (_, shell) = tmux.waitForScreen { self.exitLine($0) != nil }
        assertShellRestored(shell, status: "130")
        try tmux.type("stty -a | grep -o ' icanon\\| echo ' | tr -d ' ' | sort | tr '\\n' ,; echo")
        XCTAssertTrue(tmux.waitForScreen { $0.contains("echo,icanon,") }.0, "canonical mode and echo are back")
    }

    func testATooSmallTerminalSaysHowLargeItMustBe() throws {
        try tmux.resize(columns: 30, rows: 8)
        try startPlay()
        let (told, small) = tmux.waitForScreen { $0.contains("68×16") }
        XCTAssertTrue(told, "the screen says the size it needs:\n\(small)")
        XCTAssertTrue(small.contains("30×8"), "and the size it has:\n\(small)")
        XCTAssertTrue(small.contains("press q to quit"), small)
        XCTAssertFalse(small.contains("…"), "no line is cut:\n\(small)")
        XCTAssertFalse(small.contains("▀"), "no squeezed picture:\n\(small)")

        try tmux.resize(columns: 80, rows: 24)
        let (drawn, screen) = tmux.waitForScreen { $0.contains("here (1):") && $0.contains("▀") }
        XCTAssertTrue(drawn, "large enough again, the room is drawn:\n\(screen)")
        try tmux.press("q")
        let (_, shell) = tmux.waitForScreen { self.exitLine($0) != nil }
        XCTAssertEqual(exitLine(shell), "exit=0", shell)
    }

    func testTheScreenFollowsTheTerminalSize() throws {
        try startPlay()
        XCTAssertTrue(tmux.waitForScreen { $0.contains("here (1):") }.0)
        try tmux.resize(columns: 70, rows: 50)
        let (resized, screen) = tmux.waitForScreen { screen in
            let lines = screen.split(separator: "\n", omittingEmptySubsequences: false)
            return lines.count >= 50 && lines[49].hasPrefix("←/→ dragon") && lines[49].count <= 70
        }
        XCTAssertTrue(resized, "the key help is on the last row of the new size:\n\(screen)")
        try tmux.press("q")
        let (_, shell) = tmux.waitForScreen { self.exitLine($0) != nil }
        assertShellRestored(shell, status: "0")
    }
}
