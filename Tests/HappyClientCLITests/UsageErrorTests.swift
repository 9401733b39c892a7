@testable import HappyClientCLI
import HappyCore
import XCTest

/// Bad command lines: each is refused with a message that says what was wrong.
final class UsageErrorTests: XCTestCase {
    private func refusal(_ arguments: [String], environment: [String: String] = [:],
                         file: StaticString = #filePath, line: UInt = #line) -> UsageError? {
        do {
            let invocation = try CommandLineParser.parse(arguments, environment: environment)
            XCTFail("\(arguments) was accepted as \(invocation.command)", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    private func assertRefused(_ arguments: [String], _ expected: String, environment: [String: String] = [:],
                               file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(refusal(arguments, environment: environment, file: file, line: line)?.description, expected,
                       file: file, line: line)
    }

    func testTheExampleOfTheIssue() {
        assertRefused(["heart", "--width", "x"], #"happyclient: heart: --width needs a number from 0 to 20, got "x""#)
    }

    func testCommandsAndOptions() {
        assertRefused([], "happyclient: no command given")
        assertRefused(["jump"], #"happyclient: unknown command "jump""#)
        assertRefused(["state", "--colour"], #"happyclient: state: unknown option "--colour""#)
        assertRefused(["--json", "state"],
                      "happyclient: --json is an option of state, watch, history, rooms and room; put it after the command")
        assertRefused(["state", "--json=yes"], "happyclient: state: --json takes no value")
        assertRefused(["state", "extra"], #"happyclient: state: unexpected argument "extra""#)
        assertRefused(["state", "--room"], "happyclient: state: --room needs a value")
        assertRefused(["help", "jump"], #"happyclient: help: unknown command "jump""#)
    }

    func testValuesAreCheckedLikeTheServerChecksThem() {
        assertRefused(["happiness"], "happyclient: happiness: missing VALUE: an integer, e.g. happiness 80")
        assertRefused(["happiness", "8.5"], #"happyclient: happiness: VALUE needs an integer (0 to 100; others are clamped), got "8.5""#)
        assertRefused(["happiness", "nan"], #"happyclient: happiness: VALUE needs an integer (0 to 100; others are clamped), got "nan""#)
        assertRefused(["nudge", "scale", "+5"], #"happyclient: nudge: only happiness can be nudged, got "scale" (use pinch FACTOR for the scale)"#)
        assertRefused(["nudge", "happiness", "+200"], #"happyclient: nudge: DELTA needs an integer from -100 to 100, got "+200""#)
        assertRefused(["scale", "0"], #"happyclient: scale: VALUE needs a number greater than 0, got "0""#)
        assertRefused(["scale", "0x10"], #"happyclient: scale: VALUE needs a number greater than 0, got "0x10""#)
        assertRefused(["pinch", "-1"], #"happyclient: pinch: FACTOR needs a number greater than 0, got "-1""#)
        assertRefused(["heart"], "happyclient: heart: needs a RATE or at least one of --fill, --stroke, --width")
        assertRefused(["heart", "lots"], #"happyclient: heart: RATE needs a number (0 to 1; others are clamped), got "lots""#)
        assertRefused(["heart", "--fill", "red"], #"happyclient: heart: --fill needs a colour like #f00 or #ff0000, got "red""#)
        assertRefused(["heart", "--width", "21"], #"happyclient: heart: --width needs a number from 0 to 20, got "21""#)
        assertRefused(["dragon", "up"], #"happyclient: dragon: ACTION needs forward, back, hide, show or toggle, got "up""#)
        assertRefused(["dragon", "forward", "--times", "0"], #"happyclient: dragon: --times needs a whole number from 1 to 1000, got "0""#)
        assertRefused(["ping", "--count", "many"], #"happyclient: ping: --count needs a whole number from 1 to 100, got "many""#)
        assertRefused(["play", "--color", "256"], #"happyclient: play: --color needs truecolor, 16 or none, got "256""#)
    }

    func testActChecksTheActionAndItsFieldsAsTheServerDoes() {
        assertRefused(["act"], "happyclient: act: missing ACTION: an action, e.g. act heart.setRate value=0.5 (act --help lists them)")
        assertRefused(["act", "face.explode"], "happyclient: act: ACTION needs one of "
                      + Action.wireNames.joined(separator: ", ") + #", got "face.explode""#)
        assertRefused(["act", "face.nudgeHappiness", "delta=101"], "happyclient: act: delta must be between -100 and 100")
        assertRefused(["act", "face.setHappiness", "value=2.5"], "happyclient: act: happiness must be an integer")
        assertRefused(["act", "face.setHappiness"], "happyclient: act: face.setHappiness needs value: an integer")
        assertRefused(["act", "face.setHappiness", "value=x"], #"happyclient: act: value needs an integer, got "x""#)
        assertRefused(["act", "heart.setStyle"],
                      "happyclient: act: heart.setStyle needs at least one of fillColor, strokeColor, lineWidth")
        assertRefused(["act", "heart.setStyle", "fillColor=red"],
                      ##"happyclient: act: fillColor must be a colour like "#f00" or "#ff0000""##)
        assertRefused(["act", "dragon.forward", "value=1"], #"happyclient: act: dragon.forward takes no fields, got "value=1""#)
        assertRefused(["act", "heart.setRate", "rate=1"], #"happyclient: act: heart.setRate takes value=VALUE, got "rate=1""#)
        assertRefused(["act", "dragon.setHidden", "value=yes"], #"happyclient: act: value needs true or false, got "yes""#)
    }

    func testHistoryOptionsAreChecked() {
        assertRefused(["state", "--seq", "-1"], #"happyclient: state: --seq needs a seq (a whole number, 0 or more), got "-1""#)
        assertRefused(["state", "--seq", "2.5"], #"happyclient: state: --seq needs a seq (a whole number, 0 or more), got "2.5""#)
        assertRefused(["history", "--since", "x"], #"happyclient: history: --since needs a seq (a whole number, 0 or more), got "x""#)
        assertRefused(["history", "--limit", "0"],
                      #"happyclient: history: --limit needs a whole number from 1 to 1000000000, got "0""#)
        assertRefused(["history", "extra"], #"happyclient: history: unexpected argument "extra""#)
        assertRefused(["replay", "--speed", "0"],
                      #"happyclient: replay: --speed needs a number greater than 0, at most 1000 (1 is as it happened, 4 four times faster), got "0""#)
        assertRefused(["replay", "--from", "-3"], #"happyclient: replay: --from needs a seq (a whole number, 0 or more), got "-3""#)
        assertRefused(["replay", "--color", "256"], #"happyclient: replay: --color needs truecolor, 16 or none, got "256""#)
        assertRefused(["frame"], "happyclient: frame: missing --out FILE: where to write the PNG (- for standard output)")
        assertRefused(["frame", "tail", "--out", "f.png"], #"happyclient: frame: VIEW needs face, heart, dragon or scene, got "tail""#)
        assertRefused(["frame", "--out", "f.png", "--width", "8"],
                      #"happyclient: frame: --width needs a whole number from 16 to 2048, got "8""#)
        assertRefused(["frame", "--out", "f.png", "--phase", "100"],
                      #"happyclient: frame: --phase needs a whole number from 0 to 99, got "100""#)
        assertRefused(["--since", "3", "history"], "happyclient: --since is an option of history; put it after the command")
    }

    func testOperatorCommandsNeedARoomAWhomAndForDeletionYes() {
        assertRefused(["room"], "happyclient: room: missing ROOM: the room to show, e.g. room kitchen")
        assertRefused(["room", "bad room"], #"happyclient: room: ROOM needs 1-64 characters of A-Z a-z 0-9 _ -, got "bad room""#)
        assertRefused(["room", "a", "b"], #"happyclient: room: unexpected argument "b""#)
        assertRefused(["rooms", "--limit", "1001"], #"happyclient: rooms: --limit needs a whole number from 1 to 1000, got "1001""#)
        assertRefused(["rooms", "--after", "no room"], #"happyclient: rooms: --after needs a room name, got "no room""#)
        assertRefused(["kick", "--id", "c1"], "happyclient: kick: missing ROOM: the room to remove someone from, e.g. kick kitchen --name alice")
        assertRefused(["kick", "hall"],
                      "happyclient: kick: say whom to remove: --id ID (one connection) or --name NAME (everyone of that name)")
        assertRefused(["kick", "hall", "--id", "c1", "--name", "x"],
                      "happyclient: kick: --id and --name cannot go together: one connection by id, or everyone of a name")
        assertRefused(["kick", "hall", "--id", "c 1"],
                      #"happyclient: kick: --id needs a connection id such as c7 (happyclient room hall lists them), got "c 1""#)
        assertRefused(["kick", "hall", "--name", String(repeating: "n", count: 33)],
                      "happyclient: kick: --name needs 1-32 printable characters, got \"\(String(repeating: "n", count: 33))\"")
        assertRefused(["kick", "hall", "--name", "x", "--reason", String(repeating: "r", count: 121)],
                      "happyclient: kick: --reason needs 1 to 120 bytes of text on one line, got \"\(String(repeating: "r", count: 121))\"")
        assertRefused(["kick", "hall", "--name", "x", "--reason", "two\nlines"],
                      "happyclient: kick: --reason needs 1 to 120 bytes of text on one line, got \"two\nlines\"")
        assertRefused(["delete-room", "hall"], "happyclient: delete-room: this closes every connection of room hall and erases "
                      + "its state and history for good; add --yes to do it")
        assertRefused(["delete-room", "--yes"], "happyclient: delete-room: missing ROOM: the room to delete, e.g. delete-room kitchen --yes")
    }

    func testCommonOptionsAndTheirVariables() {
        assertRefused(["--url", "http//x", "state"], #"happyclient: state: --url needs a ws:// or wss:// URL such as ws://127.0.0.1:8080, got "http//x""#)
        assertRefused(["--room", "bad room", "state"], #"happyclient: state: --room needs 1-64 characters of A-Z a-z 0-9 _ -, got "bad room""#)
        assertRefused(["--name", String(repeating: "n", count: 33), "state"],
                      "happyclient: state: --name needs 1-32 printable characters, got \"\(String(repeating: "n", count: 33))\"")
        assertRefused(["--timeout", "0", "state"], #"happyclient: state: --timeout needs a number of seconds greater than 0 (at most 86400), got "0""#)
        assertRefused(["state"], #"happyclient: state: HAPPY_ROOM needs 1-64 characters of A-Z a-z 0-9 _ -, got "a/b""#,
                      environment: ["HAPPY_ROOM": "a/b"])
        assertRefused(["state"], #"happyclient: state: HAPPY_URL needs a ws:// or wss:// URL such as ws://127.0.0.1:8080, got "ftp://x""#,
                      environment: ["HAPPY_URL": "ftp://x"])
    }

    func testTheFullTextShowsTheCommandsUsage() {
        let text = refusal(["heart", "--width", "x"])?.fullText ?? ""
        XCTAssertEqual(text, """
            happyclient: heart: --width needs a number from 0 to 20, got "x"
            usage: happyclient [options] heart [RATE] [--fill COLOR] [--stroke COLOR] [--width WIDTH]
            Try 'happyclient heart --help' for more.
            """)
        XCTAssertTrue(refusal(["jump"])?.fullText.contains("usage: happyclient [options] <command>") ?? false)
    }

    func testHelpDocumentsTheExitCodesAndEveryCommand() {
        for code in ["0 ", "64", "65", "69", "73", "75"] {
            XCTAssertTrue(HelpText.general.contains("  \(code)"), "exit code \(code) in --help")
        }
        for name in CommandName.allCases {
            XCTAssertTrue(HelpText.general.contains("  \(name.rawValue)"), "\(name) in --help")
            XCTAssertTrue(HelpText.help(for: name).contains("exit codes:"), "\(name) --help")
        }
        XCTAssertEqual(ExitStatus.allCases.map(\.rawValue), [0, 64, 65, 69, 73, 75])
    }
}
