import Foundation
import HappyCore
import XCTest

/// `happyclient` end to end: the built binary against a live server, its
/// changes seen by another client, its exit codes and messages.
final class HappyClientTests: XCTestCase {
    private var server: ServerProcess!

    override func setUpWithError() throws {
        server = try ServerProcess()
    }

    override func tearDown() {
        server = nil
    }

    private var url: String { "ws://127.0.0.1:\(server.port)" }

    /// Runs `happyclient --url … arguments`.
    private func client(_ arguments: [String], environment: [String: String] = [:],
                        file: StaticString = #filePath, line: UInt = #line) throws -> ClientProcess.Outcome {
        try ClientProcess.run(["--url", url] + arguments, environment: environment)
    }

    // MARK: value commands

    func testEachValueCommandChangesTheStateAnotherClientSees() throws {
        let (observer, _) = try TestClient.join(server, room: "cli", name: "observer")
        let steps: [(arguments: [String], output: [String], path: String, value: JSONValue)] = [
            (["happiness", "80"], ["applied  happiness 80"], "face.happiness", .number(80)),
            (["nudge", "happiness", "+5"], ["applied  happiness 85"], "face.happiness", .number(85)),
            (["nudge", "happiness", "-5"], ["applied  happiness 80"], "face.happiness", .number(80)),
            (["scale", "1.2"], ["applied  scale 1.2"], "face.scale", .number(1.2)),
            (["pinch", "1.1"], ["applied  scale 1.32"], "face.scale", .number(1.2 * 1.1)),
            (["heart", "0.7"], ["applied  heart rate 0.7"], "heart.rate", .number(0.7)),
            (["heart", "--fill", "#0f0", "--stroke", "#000", "--width", "2"],
             ["applied  heart fill #00ff00 stroke #000000 width 2"], "heart.fillColor", .string("#00ff00")),
            (["dragon", "forward", "--times", "3"],
             ["applied  dragon (20, 10)", "applied  dragon (30, 10)", "applied  dragon (40, 10)"], "dragon.x", .number(40)),
            (["dragon", "back"], ["applied  dragon (30, 10)"], "dragon.x", .number(30)),
            (["dragon", "hide"], ["applied  dragon hidden"], "dragon.hidden", .bool(true)),
            (["dragon", "show"], ["applied  dragon shown"], "dragon.hidden", .bool(false)),
            (["dragon", "toggle"], ["applied  dragon hidden"], "dragon.hidden", .bool(true)),
            (["happiness", "150"], ["clamped  happiness 100"], "face.happiness", .number(100)),
            (["reset"], ["applied  room happiness 50, scale 0.9, heart rate 0.5, dragon (10, 10) shown"],
             "face.happiness", .number(50)),
        ]
        for step in steps {
            let outcome = try client(["--room", "cli", "--name", "cli"] + step.arguments)
            let label = step.arguments.joined(separator: " ")
            XCTAssertEqual(outcome.status, 0, "\(label): \(outcome.stderr)")
            XCTAssertEqual(outcome.lines, step.output, label)
            var last: JSONValue?
            for _ in step.output {
                let event = observer.next(type: "event")
                XCTAssertEqual(event?["sender"]?["name"]?.stringValue, "cli", label)
                last = event
            }
            let parts = step.path.split(separator: ".").map(String.init)
            XCTAssertEqual(last?["state"]?[parts[0]]?[parts[1]], step.value, "\(label): the observer sees \(step.path)")
        }
    }

    func testBlockedAndUnchangedAnswersArePrintedAndExitZero() throws {
        let blocked = try client(["--room", "edge", "dragon", "back"])
        XCTAssertEqual(blocked.status, 0)
        XCTAssertEqual(blocked.lines, ["blocked  dragon (10, 10)"])
        let unchanged = try client(["--room", "edge", "happiness", "50"])
        XCTAssertEqual(unchanged.status, 0)
        XCTAssertEqual(unchanged.lines, ["unchanged  happiness 50"])
    }

    func testStatePrintsTheSceneSeqAndPresenceAsTextAndJSON() throws {
        let (alice, welcome) = try TestClient.join(server, room: "st", name: "alice")
        let aliceID = try XCTUnwrap(welcome["you"]?["id"]?.stringValue)
        alice.intent("face.setHappiness", id: "a", ["value": 70])
        XCTAssertNotNil(alice.next(type: "ack"))

        let text = try client(["--room", "st", "state"])
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.hasPrefix("room     st   seq 1   epoch "), text.stdout)
        XCTAssertTrue(text.stdout.contains("face     happiness 70 (smile 0.4)   scale 0.9"), text.stdout)
        XCTAssertTrue(text.stdout.contains("here     1 person: alice (\(aliceID))"), text.stdout)

        let json = try client(["state", "--json", "--room", "st"])
        XCTAssertEqual(json.status, 0, json.stderr)
        XCTAssertEqual(json.lines.count, 1, "one JSON object")
        let object = JSONValue.parse(json.stdout)
        let api = try XCTUnwrap(HTTP.get("\(server.httpBase)/api/state?room=st").json)
        XCTAssertEqual(object["seq"], api["seq"])
        XCTAssertEqual(object["epoch"], api["epoch"])
        XCTAssertJSONEqual(object["state"], api["state"] ?? .null)
        XCTAssertJSONEqual(object["presence"], .array([.object([("id", .string(aliceID)), ("name", .string("alice"))])]))
        XCTAssertEqual(object["presenceCount"]?.intValue, 1)
    }

    func testTheEnvironmentChoosesServerRoomAndName() throws {
        let (observer, _) = try TestClient.join(server, room: "envroom")
        let outcome = try ClientProcess.run(["happiness", "61"], environment: [
            "HAPPY_URL": url, "HAPPY_ROOM": "envroom", "HAPPY_NAME": "from-env",
        ])
        XCTAssertEqual(outcome.status, 0, outcome.stderr)
        let event = observer.next(type: "event")
        XCTAssertEqual(event?["sender"]?["name"]?.stringValue, "from-env")
        XCTAssertEqual(event?["state"]?["face"]?["happiness"]?.intValue, 61)
    }

    func testPingPrintsRoundTripsAndTheClockOffset() throws {
        let outcome = try client(["ping", "--count", "3"])
        XCTAssertEqual(outcome.status, 0, outcome.stderr)
        XCTAssertEqual(outcome.lines.filter { $0.hasPrefix("pong ") }.count, 3)
        XCTAssertTrue(outcome.stdout.contains("rtt min/avg/max = "), outcome.stdout)
        let offsetLine = try XCTUnwrap(outcome.lines.first { $0.hasPrefix("clock offset ") })
        let offset = try XCTUnwrap(Double(offsetLine.dropFirst("clock offset ".count).prefix { $0 != " " }))
        XCTAssertLessThan(abs(offset), 50, "the server runs on this machine's clock: \(offsetLine)")
    }

    // MARK: refusals and exit codes

    func testRefusalsExit65WithTheServersCodeAndMessage() throws {
        let secret = "client-test-secret"
        server = try ServerProcess(["auth": ["secret": secret]])
        func token(_ role: String) throws -> String {
            let minted = try ServerProcess.run(["token", "--secret", secret, "--sub", "tester", "--role", role])
            return minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let viewer = try client(["--token", token("viewer"), "happiness", "10"])
        XCTAssertEqual(viewer.status, 65)
        XCTAssertEqual(viewer.stderr, "happyclient: refused by the server: forbidden: viewers may not send intents\n")

        let player = try client(["--token", token("player"), "reset"])
        XCTAssertEqual(player.status, 65)
        XCTAssertTrue(player.stderr.contains("forbidden: room.reset needs the admin role"), player.stderr)
        XCTAssertEqual(try client(["--token", token("admin"), "reset"]).status, 0)

        let badToken = try client(["--token", "not.a.token", "state"])
        XCTAssertEqual(badToken.status, 65)
        XCTAssertTrue(badToken.stderr.hasPrefix("happyclient: refused by the server at \(url)/ws: close 1008 (policy violation): invalid token"),
                      badToken.stderr)
    }

    func testAFullServerIsARefusalThatKeepsTheCloseReason() throws {
        server = try ServerProcess(["limits": ["maxClients": 1]])
        let (_, _) = try TestClient.join(server)
        let outcome = try client(["state"])
        XCTAssertEqual(outcome.status, 65)
        XCTAssertTrue(outcome.stderr.contains("try again later"), outcome.stderr)
        XCTAssertTrue(outcome.stderr.hasSuffix(": server full: 1 clients connected\n"), outcome.stderr)
    }

    func testAnUnreachableServerExits69NamingTheURLAndTheReason() throws {
        let port = LoopbackPort.free()
        for command in [["state"], ["happiness", "80"], ["watch"], ["ping"]] {
            let outcome = try ClientProcess.run(["--url", "ws://127.0.0.1:\(port)", "--timeout", "3"] + command)
            XCTAssertEqual(outcome.status, 69, "\(command): \(outcome.stderr)")
            XCTAssertEqual(outcome.stderr, "happyclient: cannot connect to ws://127.0.0.1:\(port)/ws: Connection refused\n")
            XCTAssertLessThan(outcome.seconds, 3, "well within --timeout")
        }
    }

    func testAServerThatNeverAnswersExits75WithinTheTimeout() throws {
        let silent = SilentListener()
        for command in [["state"], ["dragon", "forward"]] {
            let outcome = try ClientProcess.run(["--url", "ws://127.0.0.1:\(silent.port)", "--timeout", "1"] + command)
            XCTAssertEqual(outcome.status, 75, "\(command): \(outcome.stderr)")
            XCTAssertEqual(outcome.stderr, "happyclient: timeout: no answer from ws://127.0.0.1:\(silent.port)/ws within 1 s\n")
            XCTAssertGreaterThanOrEqual(outcome.seconds, 1)
            XCTAssertLessThan(outcome.seconds, 2.5)
        }
    }

    func testUsageErrorsExit64AndHelpExits0() throws {
        let bad = try ClientProcess.run(["heart", "--width", "x"])
        XCTAssertEqual(bad.status, 64)
        XCTAssertEqual(bad.stdout, "")
        XCTAssertTrue(bad.stderr.hasPrefix("happyclient: heart: --width needs a number from 0 to 20, got \"x\"\nusage: happyclient"),
                      bad.stderr)
        XCTAssertEqual(try ClientProcess.run([]).status, 64)
        XCTAssertEqual(try ClientProcess.run(["state"], environment: ["HAPPY_URL": "nonsense"]).status, 64)

        let help = try ClientProcess.run(["--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("exit codes:"), help.stdout)
        let commandHelp = try ClientProcess.run(["dragon", "--help"])
        XCTAssertEqual(commandHelp.status, 0)
        XCTAssertTrue(commandHelp.stdout.hasPrefix("usage: happyclient [options] dragon forward|back|hide|show|toggle"))
    }

    // MARK: watch

    func testWatchPrintsReadableLinesForEventsAndPresence() throws {
        let watch = try ClientProcess(["--url", url, "--room", "w", "watch"])
        XCTAssertTrue(watch.waitForOutput { _, err in err.contains("watching room w") }, watch.stderr)
        let (alice, _) = try TestClient.join(server, room: "w", name: "alice")
        alice.intent("dragon.forward", id: "f")
        XCTAssertNotNil(alice.next(type: "ack"))
        alice.close()
        XCTAssertTrue(watch.waitForOutput { out, _ in out.contains(" left") }, watch.stdout)
        watch.signal(SIGINT)
        let outcome = watch.finish()
        XCTAssertEqual(outcome.status, 130, "interrupted")
        let lines = outcome.lines
        XCTAssertEqual(lines.count, 3, outcome.stdout)
        let time = #"^\d\d:\d\d:\d\d "#
        XCTAssertNotNil(lines[0].range(of: time + #"alice \(c\d+\) joined$"#, options: .regularExpression), lines[0])
        XCTAssertNotNil(lines[1].range(of: time + #"#1 alice  dragon \(10, 10\) → \(20, 10\)  forwardButtonClicked:$"#,
                                       options: .regularExpression), lines[1])
        XCTAssertNotNil(lines[2].range(of: time + #"alice \(c\d+\) left$"#, options: .regularExpression), lines[2])
    }

    func testWatchJSONIsCompleteAndInOrderAcrossServerRestarts() throws {
        let port = LoopbackPort.free()
        server = try ServerProcess(["port": port])
        let watch = try ClientProcess(["--url", url, "--room", "r", "watch", "--json"])
        XCTAssertTrue(watch.waitForOutput { _, err in err.contains("watching room r") }, watch.stderr)

        var expected = 0
        func makeEvents(_ count: Int) throws {
            for _ in 0..<count {
                let answer = try HTTP.post("\(server.httpBase)/api/intent?room=r",
                                           body: #"{"action":"face.nudgeHappiness","delta":1}"#)
                XCTAssertEqual(answer.status, 200, answer.text)
                expected += 1
            }
        }
        func waitForSeq(_ seq: Int) -> Bool {
            watch.waitForOutput(timeout: 20) { out, _ in out.contains(#""seq":\#(seq),"#) }
        }

        try makeEvents(4)
        XCTAssertTrue(waitForSeq(4), watch.stdout)
        XCTAssertEqual(server.stop(), 0, "a clean restart")
        try server.start()
        try makeEvents(3)
        XCTAssertTrue(waitForSeq(7), watch.stdout + watch.stderr)
        server.kill()
        try server.start()
        try makeEvents(3)
        let (writer, _) = try TestClient.join(server, room: "r", name: "writer")
        writer.intent("dragon.forward", id: "w")
        XCTAssertNotNil(writer.next(type: "ack"))
        expected += 1
        XCTAssertTrue(waitForSeq(expected), watch.stdout + watch.stderr)
        let (_, _) = try TestClient.join(server, room: "r", name: "latecomer")
        XCTAssertTrue(watch.waitForOutput { out, _ in out.contains("latecomer") }, watch.stdout)

        watch.signal(SIGTERM)
        let outcome = watch.finish()
        XCTAssertEqual(outcome.status, 143)
        var seqs: [Int] = []
        var presence = 0
        for line in outcome.lines {
            let json = try JSONParser.parse(line, maxDepth: 64)
            switch json["type"]?.stringValue {
            case "event":
                seqs.append(try XCTUnwrap(json["seq"]?.intValue))
                XCTAssertNotNil(json["state"]?["face"]?["happiness"], line)
                XCTAssertNotNil(json["sender"]?["name"], line)
            case "presence": presence += 1
            default: XCTFail("unexpected line \(line)")
            }
        }
        XCTAssertEqual(seqs, consecutive(1, through: expected), "every event exactly once, in order")
        XCTAssertGreaterThanOrEqual(presence, 1, "the latecomer's join")
        XCTAssertTrue(outcome.stderr.contains("reconnected; resumed at seq"), outcome.stderr)
    }
}
