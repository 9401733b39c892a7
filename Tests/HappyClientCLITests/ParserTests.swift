@testable import HappyClientCLI
import HappyClientKit
import HappyCore
import XCTest

/// The command line, parsed from argument arrays: what is accepted and how.
final class ParserTests: XCTestCase {
    private func parse(_ arguments: [String], environment: [String: String] = [:],
                       file: StaticString = #filePath, line: UInt = #line) -> Invocation? {
        do {
            return try CommandLineParser.parse(arguments, environment: environment)
        } catch {
            XCTFail("\(arguments) was refused: \(error)", file: file, line: line)
            return nil
        }
    }

    private func command(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) -> Command? {
        parse(arguments, file: file, line: line)?.command
    }

    func testValueCommandsBecomeIntents() {
        XCTAssertEqual(command(["happiness", "80"]), .intents(.happiness, [.setHappiness(80)]))
        XCTAssertEqual(command(["happiness", "150"]), .intents(.happiness, [.setHappiness(150)]), "the server clamps")
        XCTAssertEqual(command(["happiness", "80.0"]), .intents(.happiness, [.setHappiness(80)]))
        XCTAssertEqual(command(["nudge", "happiness", "+5"]), .intents(.nudge, [.nudgeHappiness(5)]))
        XCTAssertEqual(command(["nudge", "happiness", "-5"]), .intents(.nudge, [.nudgeHappiness(-5)]))
        XCTAssertEqual(command(["scale", "1.2"]), .intents(.scale, [.setScale(1.2)]))
        XCTAssertEqual(command(["pinch", "1.1"]), .intents(.pinch, [.pinch(1.1)]))
        XCTAssertEqual(command(["heart", "0.7"]), .intents(.heart, [.setRate(0.7)]))
        XCTAssertEqual(command(["reset"]), .intents(.reset, [.reset]))
    }

    func testActSendsAnyActionOfTheTableByItsWireName() {
        XCTAssertEqual(command(["act", "heart.setRate", "value=0.5"]), .intents(.act, [.setRate(0.5)]))
        XCTAssertEqual(command(["act", "face.nudgeHappiness", "delta=-5"]), .intents(.act, [.nudgeHappiness(-5)]))
        XCTAssertEqual(command(["act", "dragon.setHidden", "value=false"]), .intents(.act, [.setHidden(false)]))
        XCTAssertEqual(command(["act", "heart.setStyle", "lineWidth=3", "fillColor=#0F0"]),
                       .intents(.act, [.setStyle(HeartStyle(fillColor: RGBColor(hex: "#0f0"), lineWidth: 3))]))
        XCTAssertEqual(command(["act", "room.reset"]), .intents(.act, [.reset]))
        for kind in Action.Kind.allCases where kind.spec.parameters.isEmpty {
            guard let action = Self.parameterless(kind) else { XCTFail("\(kind) does not decode"); continue }
            XCTAssertEqual(command(["act", kind.spec.wireName]), .intents(.act, [action]))
        }
        let help = HelpText.help(for: .act)
        for name in Action.wireNames { XCTAssertTrue(help.contains("  \(name)"), "act --help lists \(name)") }
    }

    /// The action of a kind without parameters, as the decoder builds it.
    private static func parameterless(_ kind: Action.Kind) -> Action? {
        try? ClientMessageDecoder.decodeIntent(.object([("action", .string(kind.spec.wireName))]), id: nil).get().action
    }

    func testHeartStyleOptions() {
        let style = HeartStyle(fillColor: RGBColor(hex: "#f00"), strokeColor: RGBColor(hex: "#000"), lineWidth: 2)
        XCTAssertEqual(command(["heart", "--fill", "#f00", "--stroke", "#000", "--width", "2"]),
                       .intents(.heart, [.setStyle(style)]))
        XCTAssertEqual(command(["heart", "--width=0"]), .intents(.heart, [.setStyle(HeartStyle(lineWidth: 0))]))
        XCTAssertEqual(command(["heart", "0.2", "--fill", "#00FF00"]),
                       .intents(.heart, [.setRate(0.2), .setStyle(HeartStyle(fillColor: RGBColor(hex: "#0f0")))]))
    }

    func testDragonActionsAndTimes() {
        XCTAssertEqual(command(["dragon", "forward"]), .intents(.dragon, [.dragonForward]))
        XCTAssertEqual(command(["dragon", "back", "--times", "3"]),
                       .intents(.dragon, Array(repeating: .dragonBack, count: 3)))
        XCTAssertEqual(command(["dragon", "hide"]), .intents(.dragon, [.setHidden(true)]))
        XCTAssertEqual(command(["dragon", "show"]), .intents(.dragon, [.setHidden(false)]))
        XCTAssertEqual(command(["dragon", "--times=2", "toggle"]), .intents(.dragon, [.toggleHidden, .toggleHidden]))
    }

    func testReadingCommands() {
        XCTAssertEqual(command(["state"]), .state(json: false))
        XCTAssertEqual(command(["state", "--json"]), .state(json: true))
        XCTAssertEqual(command(["watch", "--json"]), .watch(json: true))
        XCTAssertEqual(command(["ping"]), .ping(count: 5))
        XCTAssertEqual(command(["ping", "--count", "2"]), .ping(count: 2))
        XCTAssertEqual(command(["play"]), .play(PlayOptions()))
        XCTAssertEqual(command(["play", "--plain"]), .play(PlayOptions(colorMode: ColorMode.none)))
        XCTAssertEqual(command(["play", "--color", "16", "--art", "a.json", "--fps", "5"]),
                       .play(PlayOptions(colorMode: .ansi16, artPath: "a.json", framesPerSecond: 5)))
    }

    func testHistoryCommands() {
        XCTAssertEqual(command(["state", "--seq", "12"]), .state(json: false, seq: 12))
        XCTAssertEqual(command(["state", "--seq=0", "--json"]), .state(json: true, seq: 0))
        XCTAssertEqual(command(["history"]), .history(HistoryOptions(since: nil, limit: 100, json: false)))
        XCTAssertEqual(command(["history", "--since", "40", "--limit", "5000", "--json"]),
                       .history(HistoryOptions(since: 40, limit: 5000, json: true)))
        XCTAssertEqual(command(["replay"]), .replay(ReplayOptions(from: nil, speed: 1, play: PlayOptions())))
        XCTAssertEqual(command(["replay", "--from", "120", "--speed", "16", "--plain", "--fps", "4"]),
                       .replay(ReplayOptions(from: 120, speed: 16,
                                             play: PlayOptions(colorMode: ColorMode.none, framesPerSecond: 4))))
        XCTAssertEqual(command(["replay", "--speed", "0.5"]), .replay(ReplayOptions(speed: 0.5)))
        XCTAssertEqual(command(["frame", "--out", "f.png"]), .frame(FrameOptions(view: .scene, output: "f.png")))
        XCTAssertEqual(command(["frame", "dragon", "--seq", "7", "--out", "-", "--width", "200", "--phase", "0"]),
                       .frame(FrameOptions(view: .dragon, output: "-", seq: 7, width: 200, phase: 0)))
        XCTAssertEqual(command(["frame", "heart", "--out=h.png", "--height", "64"]),
                       .frame(FrameOptions(view: .heart, output: "h.png", height: 64)))
    }

    func testCommonOptionsBeforeOrAfterTheCommand() {
        let before = parse(["--url", "ws://example.org:9000", "--room", "kitchen", "--name", "alice",
                            "--token", "abc", "--timeout", "2.5", "state"])
        XCTAssertEqual(before?.common, CommonOptions(url: WebSocketURL("ws://example.org:9000")!, room: "kitchen",
                                                     name: "alice", token: "abc", timeout: 2.5))
        let after = parse(["state", "--json", "--room=kitchen", "--url=ws://example.org:9000", "--name", "alice",
                           "--token", "abc", "--timeout", "2.5"])
        XCTAssertEqual(after?.common, before?.common)
        XCTAssertEqual(after?.command, .state(json: true))
    }

    func testOperatorCommands() {
        XCTAssertEqual(command(["rooms"]), .rooms(RoomsOptions()))
        XCTAssertEqual(command(["rooms", "--limit", "5", "--after", "hall", "--all", "--json"]),
                       .rooms(RoomsOptions(limit: 5, after: "hall", all: true, json: true)))
        XCTAssertEqual(command(["room", "hall"]), .room("hall", json: false))
        XCTAssertEqual(command(["room", "--json", "hall"]), .room("hall", json: true))
        XCTAssertEqual(parse(["--room", "den", "room"])?.command, .room("den", json: false), "ROOM defaults to --room")
        XCTAssertEqual(parse(["--room", "den", "room", "hall"])?.command, .room("hall", json: false), "ROOM wins")
        XCTAssertEqual(command(["kick", "hall", "--id", "c7"]), .kick(KickOptions(room: "hall", target: .id("c7"))))
        XCTAssertEqual(command(["kick", "hall", "--name", "alice", "--reason", "spam, twice"]),
                       .kick(KickOptions(room: "hall", target: .name("alice"), reason: "spam, twice")))
        XCTAssertEqual(command(["delete-room", "hall", "--yes"]), .deleteRoom("hall"))
    }

    /// After kick, --name names whom to remove; before the command it is still one's own name.
    func testKicksNameIsWhomToRemove() {
        let invocation = parse(["--name", "ops", "kick", "hall", "--name", "alice"])
        XCTAssertEqual(invocation?.common.name, "ops")
        XCTAssertEqual(invocation?.command, .kick(KickOptions(room: "hall", target: .name("alice"))))
        XCTAssertEqual(parse(["state", "--name", "bob"])?.common.name, "bob", "other commands keep the common --name")
    }

    func testWhichCommandsObserveAndWhichAct() {
        let observing = [["state"], ["watch"], ["ping"]]
        let acting = [["happiness", "5"], ["dragon", "forward"], ["reset"], ["play"], ["replay"]]
        let neither = [["state", "--seq", "1"], ["history"], ["frame", "--out", "x"], ["rooms"], ["room", "a"],
                       ["kick", "a", "--id", "c1"], ["delete-room", "a", "--yes"]]
        for arguments in observing + acting + neither {
            guard let command = command(arguments) else { continue }
            XCTAssertEqual(command.observesTheRoom, observing.contains(arguments), "\(arguments)")
            XCTAssertEqual(command.actsInTheRoom, acting.contains(arguments), "\(arguments)")
        }
    }

    func testTheLoginNameIsUSERThenLOGNAMEThenThePasswordDatabase() {
        XCTAssertEqual(LoginName.from(environment: ["USER": "carol", "LOGNAME": "dave"], database: { "root" }), "carol")
        XCTAssertEqual(LoginName.from(environment: ["USER": "", "LOGNAME": "dave"], database: { "root" }), "dave")
        XCTAssertEqual(LoginName.from(environment: [:], database: { "erin" }), "erin")
        XCTAssertNil(LoginName.from(environment: ["USER": String(repeating: "u", count: 40)], database: { nil }),
                     "no valid name: the server chooses")
    }

    func testDefaultsAndEnvironment() {
        let plain = parse(["state"])
        XCTAssertEqual(plain?.common.url.description, "ws://127.0.0.1:8080/")
        XCTAssertNil(plain?.common.room)
        XCTAssertEqual(plain?.common.timeout, 5)
        let environment = ["HAPPY_URL": "ws://10.0.0.2:81", "HAPPY_ROOM": "den", "HAPPY_NAME": "bob",
                           "HAPPY_TOKEN": "tok"]
        let fromEnvironment = parse(["state"], environment: environment)
        XCTAssertEqual(fromEnvironment?.common.url.host, "10.0.0.2")
        XCTAssertEqual(fromEnvironment?.common.room, "den")
        XCTAssertEqual(fromEnvironment?.common.name, "bob")
        XCTAssertEqual(fromEnvironment?.common.token, "tok")
        let overridden = parse(["--room", "attic", "state"], environment: environment)
        XCTAssertEqual(overridden?.common.room, "attic", "the command line wins")
        XCTAssertNil(parse(["state"], environment: ["HAPPY_ROOM": ""])?.common.room, "empty means unset")
    }

    func testNegativeNumbersAndDoubleDashAreValues() {
        XCTAssertEqual(command(["happiness", "-3"]), .intents(.happiness, [.setHappiness(-3)]))
        XCTAssertEqual(command(["heart", "-0.5"]), .intents(.heart, [.setRate(-0.5)]))
        XCTAssertEqual(command(["nudge", "--", "happiness", "-7"]), .intents(.nudge, [.nudgeHappiness(-7)]))
    }

    func testHelpForTheToolAndEachCommand() {
        XCTAssertEqual(command(["--help"]), .help(nil))
        XCTAssertEqual(command(["-h"]), .help(nil))
        XCTAssertEqual(command(["help"]), .help(nil))
        XCTAssertEqual(command(["help", "heart"]), .help(.heart))
        XCTAssertEqual(command(["heart", "--help"]), .help(.heart))
        XCTAssertEqual(command(["heart", "--width", "x", "--help"]), .help(.heart), "help wins over bad values")
        for name in CommandName.allCases where name != .help {
            XCTAssertEqual(command([name.rawValue, "--help"]), .help(name))
        }
    }

    func testVersionAnywhereOnTheLine() {
        XCTAssertEqual(command(["--version"]), .version)
        XCTAssertEqual(command(["--room", "kitchen", "state", "--version"]), .version)
        XCTAssertEqual(command(["--version", "--help"]), .help(nil), "help wins")
        XCTAssertTrue(HelpText.general.contains("--version"))
    }
}
