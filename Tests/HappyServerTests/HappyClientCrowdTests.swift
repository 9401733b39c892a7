import Foundation
import HappyCore
import XCTest

/// `happyclient` in a crowd room (PROTOCOL.md section 12): writers over
/// WebSocket drive the room into tick delivery; `watch` prints one line per
/// tick, the delivery switches and the batched joins, and `play` shows the
/// crowd: how many are here, the presses of the last second, the recent senders.
final class HappyClientCrowdTests: XCTestCase {
    private var server: ServerProcess!

    override func tearDown() {
        server = nil
    }

    /// Clients of the room pressing the dragon's buttons (two forward for one back) on a
    /// thread of their own until stopped; the room's seq then stands still.
    private final class Writers: @unchecked Sendable {
        private let clients: [TestClient]
        private let stopped = NSCondition()
        private var stopping = false
        private var running = false

        init(_ server: ServerProcess, room: String, count: Int) throws {
            clients = try (1...count).map { try TestClient.join(server, room: room, name: "writer\($0)").0 }
        }

        /// Each writer presses every `interval` seconds.
        func start(interval: Double) {
            running = true
            Thread.detachNewThread { [self] in
                var press = 0
                while !isStopping {
                    for (index, client) in clients.enumerated() {
                        client.intent((press + index) % 3 == 2 ? "dragon.back" : "dragon.forward", id: "p\(press)")
                    }
                    press += 1
                    Thread.sleep(forTimeInterval: interval)
                }
                stopped.lock()
                running = false
                stopped.broadcast()
                stopped.unlock()
            }
        }

        private var isStopping: Bool {
            stopped.lock()
            defer { stopped.unlock() }
            return stopping
        }

        /// Stops pressing and waits until the last press is sent.
        func stop() {
            stopped.lock()
            stopping = true
            while running { stopped.wait() }
            stopped.unlock()
        }

        func close() {
            stop()
            clients.forEach { $0.close() }
        }
    }

    private func roomState(_ room: String) throws -> JSONValue {
        try XCTUnwrap(HTTP.get("\(server.httpBase)/api/state?room=\(room)").json)
    }

    /// The room's seq once no event has come for half a second.
    private func settledSeq(_ room: String) throws -> Int {
        var seq = try XCTUnwrap(roomState(room)["seq"]?.intValue)
        while true {
            Thread.sleep(forTimeInterval: 0.5)
            let now = try XCTUnwrap(roomState(room)["seq"]?.intValue)
            if now == seq { return seq }
            seq = now
        }
    }

    // MARK: watch

    func testWatchPrintsATickLinePerTickWithTheSwitchesAndBatchedJoins() throws {
        // Three clients pressing 20 times a second each make 60 × 4 deliveries a second, over tickAbove.
        server = try ServerProcess(["crowd": ["mode": "auto", "tickAbove": 100, "presenceBatchAbove": 2]])
        let url = "ws://127.0.0.1:\(server.port)"
        let watch = try ClientProcess(["--url", url, "--room", "crowd", "watch"])
        let json = try ClientProcess(["--url", url, "--room", "crowd", "watch", "--json"])
        for process in [watch, json] {
            XCTAssertTrue(process.waitForOutput { _, err in err.contains("watching room crowd") }, process.stderr)
        }
        let writers = try Writers(server, room: "crowd", count: 3)
        writers.start(interval: 0.05)
        XCTAssertTrue(watch.waitForOutput { out, _ in out.contains("delivery: one tick every 50 ms") }, watch.stdout)
        let rangeOfTick = try NSRegularExpression(pattern: #" #\d+–\d+ "#)
        XCTAssertTrue(watch.waitForOutput { out, _ in
            rangeOfTick.numberOfMatches(in: out, range: NSRange(out.startIndex..., in: out)) > 10
        }, watch.stdout)
        writers.stop()
        let seq = try settledSeq("crowd")
        XCTAssertTrue(watch.waitForOutput { out, _ in out.contains("–\(seq) ") || out.contains("#\(seq) ") }, watch.stdout)
        writers.close()
        // Ten quiet seconds later the room goes back to one message per event.
        XCTAssertTrue(watch.waitForOutput(timeout: 25) { out, _ in out.contains("delivery: one message per event") },
                      watch.stdout)
        watch.signal(SIGINT)
        json.signal(SIGINT)
        let lines = watch.finish().lines
        let messages = json.finish().lines
        print(lines.prefix(12).joined(separator: "\n"))

        let time = #"^\d\d:\d\d:\d\d "#
        XCTAssertTrue(lines.contains { $0.range(of: time + #"\+\d+ joined, \d+ left \(\d+ here\)$"#, options: .regularExpression) != nil },
                      "a batch of joins in a room of more than two")
        // From the switch on: one line per tick, the ticks' ranges following one another up to the last event.
        let switchIndex = try XCTUnwrap(lines.firstIndex { $0.hasSuffix(" delivery: one tick every 50 ms") })
        let tickPattern = try NSRegularExpression(pattern: time + #"#(\d+)(?:–(\d+))? (writer\d+(?: and \d+ others?| and writer\d+)?): (\d+ forward|\d+ back)"#)
        var ranges: [(from: Int, to: Int)] = []
        for line in lines[switchIndex...] where line.contains(" #") {
            let match = try XCTUnwrap(tickPattern.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)), line)
            let from = Int(line[Range(match.range(at: 1), in: line)!])!
            let to = Range(match.range(at: 2), in: line).map { Int(line[$0])! } ?? from
            ranges.append((from, to))
        }
        XCTAssertGreaterThan(ranges.count, 10)
        for (previous, next) in zip(ranges, ranges.dropFirst()) {
            XCTAssertEqual(next.from, previous.to + 1, "gap-free ticks: \(ranges)")
        }
        XCTAssertEqual(ranges.last?.to, seq)
        XCTAssertFalse(lines.contains { $0.contains("did not arrive") }, lines.joined(separator: "\n"))

        // --json prints the ticks as received and the switches as the server writes them.
        XCTAssertTrue(messages.contains(#"{"type":"delivery","mode":"tick","tickMs":50}"#), messages.prefix(5).joined(separator: "\n"))
        XCTAssertTrue(messages.contains(#"{"type":"delivery","mode":"each","tickMs":50}"#))
        let ticks = try messages.map { try JSONParser.parse($0, maxDepth: 64) }.filter { $0["type"]?.stringValue == "tick" }
        XCTAssertEqual(ticks.compactMap { $0["seq"]?.intValue }.max(), seq)
    }

    // MARK: play

    func testPlayShowsTheCrowdItsTallyAndRecentSendersAndEndsInStep() throws {
        server = try ServerProcess(["crowd": ["mode": "tick", "presenceBatchAbove": 2]])
        let tmux = try TmuxSession(columns: 120, rows: 40, environment: ["COLORTERM": "truecolor", "TERM": "xterm-256color"])
        let writers = try Writers(server, room: "big", count: 4)
        try tmux.type("'\(ClientProcess.binary.path)' play --url ws://127.0.0.1:\(server.port) --room big --name player; echo \"exit=$?\"")
        writers.start(interval: 0.1)
        let pressing = try NSRegularExpression(pattern: #"here \(5\) · last second: [1-9]\d* forward, [1-9]\d* back · recent: writer\d"#)
        let (shown, screen) = tmux.waitForScreen(timeout: 15) { screen in
            pressing.firstMatch(in: screen, range: NSRange(screen.startIndex..., in: screen)) != nil
        }
        XCTAssertTrue(shown, "the crowd line with a live tally:\n\(screen)")
        XCTAssertTrue(screen.contains("the crowd: ") || screen.range(of: #"writer\d: (forward|back)"#, options: .regularExpression) != nil,
                      "the status label follows the ticks:\n\(screen)")

        writers.stop()
        let seq = try settledSeq("big")
        let x = try XCTUnwrap(roomState("big")["state"]?["dragon"]?["x"]?.doubleValue)
        let (still, after) = tmux.waitForScreen(timeout: 10) { screen in
            screen.contains("last second: 0 forward, 0 back") && screen.contains("seq \(seq)")
                && screen.contains("dragon (\(Describe.number(x)), 10) shown")
        }
        XCTAssertTrue(still, "in step with the server at seq \(seq), x \(x), the tally back to nothing:\n\(after)")

        // A press alone in its tick names its sender on the label.
        try tmux.press(x > 150 ? "Left" : "Right")
        let direction = x > 150 ? "back" : "forward"
        let (labelled, labelScreen) = tmux.waitForScreen { $0.contains("player: \(direction), (x,y) = ") }
        XCTAssertTrue(labelled, labelScreen)
        try tmux.press("q")
        let (ended, shell) = tmux.waitForScreen { $0.contains("exit=0") }
        XCTAssertTrue(ended, shell)
        writers.close()
    }
}

private enum Describe {
    /// `270` for 270.0, as the play screen prints positions.
    static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
