import Foundation
import HappyCore
import XCTest

/// `happyclient history`, `state --seq`, `frame` and `replay` against a live
/// server (PROTOCOL.md section 11): the history printed is what was
/// broadcast, paged through; past states and frames are the server's; the
/// replay shows the past under tmux, then the room live. The servers keep
/// their history in the durable store, as `make run` does.
final class HappyClientHistoryTests: XCTestCase {
    private var server: ServerProcess!

    override func setUpWithError() throws {
        server = try ServerProcess(Self.settings())
    }

    override func tearDown() {
        server = nil
    }

    /// The default durable store, with `persistence` and `limits` as given.
    private static func settings(persistence: [String: Any] = [:], limits: [String: Any] = [:]) -> [String: Any] {
        ["persistence": persistence, "limits": limits]
    }

    private var url: String { "ws://127.0.0.1:\(server.port)" }

    /// Runs `happyclient --url … --room room arguments` to its end.
    private func client(room: String, _ arguments: [String]) throws -> ClientProcess.Outcome {
        try ClientProcess.run(["--url", url, "--room", room] + arguments)
    }

    /// Sends `actions` one at a time, each acked before the next; returns
    /// the events another client received, with their exact text.
    private func play(_ actions: [(String, [String: Any])], room: String,
                      file: StaticString = #filePath, line: UInt = #line) throws -> [ReceivedMessage] {
        let (actor, _) = try TestClient.join(server, room: room, name: "actor")
        let (watcher, _) = try TestClient.join(server, room: room, name: "watcher")
        defer {
            actor.close()
            watcher.close()
        }
        var events: [ReceivedMessage] = []
        for (index, action) in actions.enumerated() {
            actor.intent(action.0, id: "i\(index)", action.1)
            XCTAssertNotNil(actor.next(type: "ack", timeout: 10), "no ack for \(action.0)", file: file, line: line)
            events.append(try XCTUnwrap(watcher.nextMessage(type: "event", timeout: 10), "no event for \(action.0)",
                                        file: file, line: line))
        }
        return events
    }

    /// `count` nudges sent at once; returns when all are acked.
    private func nudge(_ count: Int, room: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let (actor, _) = try TestClient.join(server, room: room, name: "actor")
        defer { actor.close() }
        for index in 0..<count {
            actor.intent("face.nudgeHappiness", id: "n\(index)", ["delta": index % 2 == 0 ? 3 : -2])
        }
        var acked = 0
        let deadline = Date(timeIntervalSinceNow: 30)
        while acked < count, Date() < deadline, let message = actor.next(timeout: deadline.timeIntervalSinceNow) {
            if message["type"]?.stringValue == "ack" { acked += 1 }
            XCTAssertNotEqual(message["type"]?.stringValue, "error", "\(message)", file: file, line: line)
        }
        XCTAssertEqual(acked, count, "every nudge acked", file: file, line: line)
    }

    /// The seqs of NDJSON event lines.
    private func seqs(_ lines: [String]) throws -> [Int] {
        try lines.map { try XCTUnwrap(JSONParser.parse($0, maxDepth: 64)["seq"]?.intValue, $0) }
    }

    // MARK: history

    func testHistoryPrintsWhatWasBroadcastAsWatchPrintsItAndAsJSON() throws {
        let watch = try ClientProcess(["--url", url, "--room", "h1", "watch"])
        XCTAssertTrue(watch.waitForOutput { _, err in err.contains("watching room h1") }, watch.stderr)
        let broadcast = try play([("dragon.forward", [:]), ("face.setHappiness", ["value": 80]),
                                  ("heart.setRate", ["value": 0.25]), ("heart.setStyle", ["lineWidth": 3]),
                                  ("dragon.toggleHidden", [:]), ("room.reset", [:])], room: "h1")
        XCTAssertTrue(watch.waitForOutput { out, _ in out.contains(" #6 ") }, watch.stdout)
        watch.signal(SIGINT)
        let watched = watch.finish().lines.filter { $0.range(of: #"^\d\d:\d\d:\d\d #\d+ "#, options: .regularExpression) != nil }

        let json = try client(room: "h1", ["history", "--json"])
        XCTAssertEqual(json.status, 0, json.stderr)
        XCTAssertEqual(json.lines, broadcast.map(\.text), "each event exactly as it was broadcast")
        XCTAssertEqual(json.stderr, "")

        let text = try client(room: "h1", ["history"])
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertEqual(text.lines.count, 6, text.stdout)
        XCTAssertEqual(text.lines, watched, "the lines watch printed as the events happened")
        XCTAssertTrue(text.lines[0].hasSuffix(" #1 actor  dragon (10, 10) → (20, 10)  forwardButtonClicked:"), text.lines[0])

        let empty = try client(room: "h1", ["history", "--since", "6"])
        XCTAssertEqual(empty.status, 0)
        XCTAssertEqual(empty.stdout, "")
        XCTAssertEqual(empty.stderr, "happyclient: no events after seq 6 (the room is at seq 6)\n")
    }

    func testAMistypedRoomIsSaidToBeNew() throws {
        _ = try play([("dragon.forward", [:])], room: "kitchen")
        let note = "happyclient: room kitchn is new: nobody here, no history\n"

        let history = try client(room: "kitchn", ["history"])
        XCTAssertEqual(history.status, 0, history.stderr)
        XCTAssertEqual(history.stdout, "")
        XCTAssertEqual(history.stderr, note)

        let state = try client(room: "kitchn", ["state"])
        XCTAssertEqual(state.status, 0, state.stderr)
        XCTAssertTrue(state.stdout.hasPrefix("room     kitchn   seq 0"), state.stdout)
        XCTAssertEqual(state.stderr, note)

        let watch = try ClientProcess(["--url", url, "--room", "kitchn", "watch"])
        XCTAssertTrue(watch.waitForOutput { _, err in err.contains("watching room kitchn") && err.contains(note) }, watch.stderr)
        watch.signal(SIGINT)
        XCTAssertEqual(watch.finish().status, 130)

        // A room with history, or with somebody in it, is not new.
        let known = try client(room: "kitchen", ["state"])
        XCTAssertEqual(known.stderr, "")
        let (someone, _) = try TestClient.join(server, room: "waiting", name: "someone")
        defer { someone.close() }
        let waiting = try client(room: "waiting", ["history"])
        XCTAssertEqual(waiting.status, 0, waiting.stderr)
        XCTAssertEqual(waiting.stderr, "happyclient: no events held (the room is at seq 0)\n")
    }

    func testSinceAndLimitPageThroughTheHistory() throws {
        server = try ServerProcess(Self.settings(persistence: ["historyLimit": 1100],
                                                 limits: ["intentsPerSecond": 100_000, "intentBurst": 100_000]))
        try nudge(1200, room: "h2")

        let all = try client(room: "h2", ["history", "--json", "--limit", "5000"])
        XCTAssertEqual(all.status, 0, all.stderr)
        XCTAssertEqual(try seqs(all.lines), Array(101...1200), "two pages of at most 1000, from the oldest held")
        XCTAssertEqual(all.stderr, "", "no note without --since")

        let middle = try client(room: "h2", ["history", "--json", "--since", "120", "--limit", "1050"])
        XCTAssertEqual(middle.status, 0, middle.stderr)
        XCTAssertEqual(try seqs(middle.lines), Array(121...1170))

        let tail = try client(room: "h2", ["history", "--since", "1195"])
        XCTAssertEqual(tail.status, 0, tail.stderr)
        XCTAssertEqual(tail.lines.map { $0.split(separator: " ")[1] }, ["#1196", "#1197", "#1198", "#1199", "#1200"])

        let defaulted = try client(room: "h2", ["history", "--json"])
        XCTAssertEqual(try seqs(defaulted.lines), Array(101...200), "100 by default")

        let older = try client(room: "h2", ["history", "--since", "50", "--limit", "3", "--json"])
        XCTAssertEqual(older.status, 0, older.stderr)
        XCTAssertEqual(try seqs(older.lines), [101, 102, 103])
        XCTAssertEqual(older.stderr, "happyclient: history starts at seq 101 (events 51–100 are no longer held)\n")

        let beyond = try client(room: "h2", ["history", "--since", "5000"])
        XCTAssertEqual(beyond.status, 65)
        XCTAssertEqual(beyond.stderr, "happyclient: refused by the server: invalid_value: since 5000 is beyond the room's seq 1200\n")
        XCTAssertEqual(beyond.stdout, "")

        let gone = try client(room: "h2", ["state", "--seq", "10"])
        XCTAssertEqual(gone.status, 65)
        XCTAssertTrue(gone.stderr.hasPrefix("happyclient: refused by the server: gone: seq 10 is no longer held"), gone.stderr)
        XCTAssertEqual(try client(room: "h2", ["state", "--seq", "100"]).status, 0, "first - 1 is still held")
    }

    // MARK: state --seq and frame

    func testStateAtASeqPrintsThePastStateAndTheDragonLabel() throws {
        _ = try play([("dragon.forward", [:]), ("face.setHappiness", ["value": 80]), ("dragon.toggleHidden", [:])],
                     room: "s1")
        let text = try client(room: "s1", ["state", "--seq", "2"])
        XCTAssertEqual(text.status, 0, text.stderr)
        let epoch = try XCTUnwrap(HTTP.get("\(server.httpBase)/api/state?room=s1").json?["epoch"]?.stringValue)
        XCTAssertEqual(text.stdout, """
            room     s1   seq 2   epoch \(epoch)
            face     happiness 80 (smile 0.6)   scale 0.9
            heart    rate 0.5   fill #ff0000   stroke #000000   width 1
            dragon   (20, 10)   shown
            status   forward, (x,y) = (20, 10)

            """)

        let json = try client(room: "s1", ["state", "--seq", "3", "--json"])
        XCTAssertEqual(json.status, 0, json.stderr)
        let answer = try HTTP.get("\(server.httpBase)/api/state?room=s1&seq=3")
        XCTAssertEqual(json.stdout, answer.text.trimmingCharacters(in: .whitespacesAndNewlines) + "\n", "the server's answer")
        XCTAssertEqual(answer.json?["dragonStatus"]?.stringValue, "hide")

        let beyond = try client(room: "s1", ["state", "--seq", "4"])
        XCTAssertEqual(beyond.status, 65)
        XCTAssertEqual(beyond.stderr, "happyclient: refused by the server: invalid_value: seq 4 is beyond the room's seq 3\n")
    }

    func testFrameAtASeqWritesThePNGTheServerDraws() throws {
        _ = try play([("dragon.forward", [:]), ("face.setHappiness", ["value": 10]), ("dragon.toggleHidden", [:])],
                     room: "f1")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("happy-frames-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        for seq in 0...3 {
            let file = directory.appendingPathComponent("scene-\(seq).png")
            let outcome = try client(room: "f1", ["frame", "--seq", "\(seq)", "--out", file.path])
            XCTAssertEqual(outcome.status, 0, outcome.stderr)
            let served = try HTTP.get("\(server.httpBase)/frame/scene.png?room=f1&seq=\(seq)")
            XCTAssertEqual(served.status, 200)
            XCTAssertEqual(try Data(contentsOf: file), served.body, "seq \(seq): the server's PNG")
            XCTAssertNotNil(outcome.stdout.range(of: #"^wrote .*scene-\d\.png: scene at seq \d, \d+×\d+ pixels, \d+ bytes\n$"#,
                                                 options: .regularExpression), outcome.stdout)
        }
        XCTAssertNotEqual(try Data(contentsOf: directory.appendingPathComponent("scene-1.png")),
                          try Data(contentsOf: directory.appendingPathComponent("scene-2.png")), "the past differs")

        let dragon = directory.appendingPathComponent("dragon.png")
        let sized = try client(room: "f1", ["frame", "dragon", "--seq", "1", "--width", "200", "--out", dragon.path])
        XCTAssertEqual(sized.status, 0, sized.stderr)
        XCTAssertEqual(try Data(contentsOf: dragon),
                       try HTTP.get("\(server.httpBase)/frame/dragon.png?room=f1&seq=1&w=200").body)

        let beyond = try client(room: "f1", ["frame", "--seq", "9", "--out", directory.appendingPathComponent("x.png").path])
        XCTAssertEqual(beyond.status, 65, beyond.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.appendingPathComponent("x.png").path))

        let unwritable = try client(room: "f1", ["frame", "--out", directory.appendingPathComponent("no/such.png").path])
        XCTAssertEqual(unwritable.status, 73)
        XCTAssertTrue(unwritable.stderr.hasSuffix("no/such.png: No such file or directory\n"), unwritable.stderr)
    }

    // MARK: refusals

    func testRefusalsAndAnUnreachableServerExitWithTheDocumentedCodes() throws {
        let secret = "client-history-secret"
        server = try ServerProcess(Self.settings().merging(["auth": ["secret": secret]]) { _, new in new })
        let missing = try client(room: "a1", ["history"])
        XCTAssertEqual(missing.status, 65)
        XCTAssertEqual(missing.stderr, "happyclient: refused by the server: unauthorized: an access token is required\n")
        let elsewhere = try TokenMinter.mint(server, subject: "vera", role: "viewer", room: "elsewhere")
        let forbidden = try client(room: "a1", ["--token", elsewhere, "state", "--seq", "0"])
        XCTAssertEqual(forbidden.status, 65)
        XCTAssertEqual(forbidden.stderr, "happyclient: refused by the server: forbidden: the token does not allow room a1\n")
        let viewer = try TokenMinter.mint(server, subject: "vera", role: "viewer")
        let allowed = try client(room: "a1", ["--token", viewer, "history"])
        XCTAssertEqual(allowed.status, 0, "any role may read the past: \(allowed.stderr)")

        let port = LoopbackPort.free()
        for command in [["history"], ["state", "--seq", "1"], ["frame", "--out", "/dev/null"]] {
            let outcome = try ClientProcess.run(["--url", "ws://127.0.0.1:\(port)", "--timeout", "3"] + command)
            XCTAssertEqual(outcome.status, 69, "\(command): \(outcome.stderr)")
            XCTAssertTrue(outcome.stderr.hasPrefix("happyclient: cannot connect to http://127.0.0.1:\(port)/"), outcome.stderr)
            XCTAssertTrue(outcome.stderr.hasSuffix(": Connection refused\n"), outcome.stderr)
        }
    }
}

/// `happyclient replay` in a real terminal (tmux), as `HappyClientPlayTests` drives `play`.
final class HappyClientReplayTests: XCTestCase {
    private var server: ServerProcess!
    private var tmux: TmuxSession!

    override func setUpWithError() throws {
        server = try ServerProcess()
        tmux = try TmuxSession(columns: 120, rows: 40, environment: ["COLORTERM": "truecolor", "TERM": "xterm-256color"])
    }

    override func tearDown() {
        tmux = nil
        server = nil
    }

    private func lines(_ screen: String) -> [String] {
        screen.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    private func exitLine(_ screen: String) -> String? {
        lines(screen).first { $0.range(of: #"^exit=\d+$"#, options: .regularExpression) != nil }
    }

    private func startReplay(_ extra: [String]) throws {
        let arguments = (["replay", "--url", "ws://127.0.0.1:\(server.port)", "--room", "r", "--name", "viewer"] + extra)
            .joined(separator: " ")
        try tmux.type("'\(ClientProcess.binary.path)' \(arguments); echo \"exit=$?\"")
    }

    private func post(_ intent: String) throws {
        let answer = try HTTP.post("\(server.httpBase)/api/intent?room=r", body: intent, headers: ["X-Happy-Name": "actor"])
        XCTAssertEqual(answer.status, 200, answer.text)
    }

    /// Three events a little over a second apart, so that each replayed
    /// step stays on the screen for a second at 1×.
    private func makeHistory() throws {
        try post(#"{"action":"face.setHappiness","value":70}"#)
        Thread.sleep(forTimeInterval: 1.1)
        try post(#"{"action":"dragon.forward"}"#)
        Thread.sleep(forTimeInterval: 1.1)
        try post(#"{"action":"face.setHappiness","value":20}"#)
    }

    func testReplayShowsThePastStepByStepThenTheRoomLive() throws {
        try makeHistory()
        try startReplay(["--from", "1", "--speed", "1"])
        let (started, start) = tmux.waitForScreen {
            $0.contains("replay seq 1 of 3 at 1×") && $0.contains("happiness 70 ·") && $0.contains("dragon's status")
        }
        XCTAssertTrue(started, "the replay starts from the room after event 1:\n\(start)")
        XCTAssertTrue(start.contains("any key: live now  q quit"), start)
        XCTAssertTrue(start.contains("▀"), "the picture is drawn:\n\(start)")

        // The room moves on live while the replay shows the past.
        try post(#"{"action":"face.setHappiness","value":90}"#)
        let (stepped, step) = tmux.waitForScreen { $0.contains("replay seq 2 of 3 at 1×") }
        XCTAssertTrue(stepped, step)
        XCTAssertTrue(step.contains("actor: forward, (x,y) = (20, 10)"), "the label of the past:\n\(step)")
        XCTAssertTrue(step.contains("happiness 70 · scale 0.9 · heart 0.5 · dragon (20, 10) shown"), step)
        XCTAssertFalse(step.contains("happiness 90"), "not the live room yet:\n\(step)")

        let (live, screen) = tmux.waitForScreen { $0.contains("replay done; live at seq 4, 1 event meanwhile") }
        XCTAssertTrue(live, "the replay ends and goes live:\n\(screen)")
        XCTAssertTrue(screen.contains("happiness 90 · scale 0.9 · heart 0.5 · dragon (20, 10) shown"), screen)
        XCTAssertTrue(screen.contains("connected · seq 4"), screen)
        XCTAssertTrue(screen.contains("←/→ dragon  ↑/↓ happiness  +/- scale  [ ] heart rate  h hide  q quit"), screen)
        XCTAssertFalse(screen.contains("replay seq"), screen)

        try tmux.press("Right")
        XCTAssertTrue(tmux.waitForScreen { $0.contains("viewer: forward, (x,y) = (30, 10)") }.0, "live keys work")
        try tmux.press("q")
        let (_, shell) = tmux.waitForScreen { self.exitLine($0) != nil }
        XCTAssertEqual(exitLine(shell), "exit=0", shell)
    }

    func testAFromBeyondTheRoomIsRefusedInTheOptionsWords() throws {
        try post(#"{"action":"dragon.forward"}"#)
        try post(#"{"action":"dragon.forward"}"#)
        try startReplay(["--from", "999"])
        let (_, shell) = tmux.waitForScreen { self.exitLine($0) != nil }
        XCTAssertEqual(exitLine(shell), "exit=65", shell)
        XCTAssertTrue(shell.contains("happyclient: replay: --from 999 is beyond the room's seq 2 (from 0 to 2)"), shell)
        XCTAssertFalse(shell.contains("since"), "the HTTP parameter's name is not the option typed:\n\(shell)")
    }

    func testAMistypedRoomIsSaidToBeNewBeforeTheTerminalIsTaken() throws {
        try startReplay([])
        let (_, shell) = tmux.waitForScreen { self.exitLine($0) != nil }
        XCTAssertEqual(exitLine(shell), "exit=0", shell)
        XCTAssertTrue(shell.contains("happyclient: room r is new: nobody here, no history"), shell)
    }

    func testAKeyDuringTheReplayGoesLive() throws {
        try makeHistory()
        try startReplay(["--speed", "1", "--plain"])
        // Both rows, as a capture may fall between the writes of one redraw.
        let (started, start) = tmux.waitForScreen { $0.contains("replay seq 0 of 3 at 1×") && $0.contains("happiness 50 ·") }
        XCTAssertTrue(started, "from the oldest held, the room before its first event:\n\(start)")
        try tmux.press("Space")
        let (live, screen) = tmux.waitForScreen { $0.contains("replay stopped at seq") && $0.contains("live at seq 3") }
        XCTAssertTrue(live, screen)
        XCTAssertTrue(screen.contains("happiness 20 ·"), "the room now:\n\(screen)")
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/state?room=r").json?["seq"]?.intValue, 3,
                       "the key sent nothing")
        try tmux.press("C-c")
        let (_, shell) = tmux.waitForScreen { self.exitLine($0) != nil }
        XCTAssertEqual(exitLine(shell), "exit=130", shell)
    }
}
