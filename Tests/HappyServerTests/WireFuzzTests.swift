import Foundation
import HappyCore
import XCTest

/// Hostile bytes on live sockets, each kind on its own connection: the
/// offending connection gets the documented close code or error, and the
/// server keeps serving everyone else.
final class WireFuzzTests: XCTestCase {
    private var server: ServerProcess!
    private var random = SplitMix64(seed: 0x4861_7070_79)

    override func setUpWithError() throws {
        server = try ServerProcess(["limits": ["intentsPerSecond": 10_000, "intentBurst": 10_000]])
    }

    override func tearDownWithError() throws {
        if let server {
            XCTAssertTrue(server.isRunning, "the server died: \(server.logText.suffix(2000))")
            XCTAssertEqual(try RawHTTP.get(port: server.port, target: "/healthz").body, "ok")
            let (client, _) = try TestClient.join(server, name: "after")
            client.intent("dragon.toggleHidden", id: "ok")
            XCTAssertEqual(client.next(type: "ack")?["id"]?.stringValue, "ok", "a normal client is still served")
        }
        server = nil
    }

    // MARK: helpers

    /// A raw WebSocket on /ws that has read its welcome.
    private func welcomed() throws -> RawWebSocket {
        let socket = try RawWebSocket(port: server.port)
        XCTAssertTrue(socket.upgraded, socket.handshake)
        guard case .text(let text)? = socket.nextFrame(), text.contains("\"welcome\"") else {
            throw RawSocket.failure("no welcome")
        }
        return socket
    }

    /// How the server ended a connection.
    enum Ending: Hashable {
        case close(UInt16?)
        /// TCP closed without a close frame.
        case dropped
        /// Still open after the read timeout.
        case open
    }

    /// How the server ends the connection after `send`.
    private func ending(after send: (RawWebSocket) throws -> Void) throws -> Ending {
        let socket = try welcomed()
        try send(socket)
        if case .close(let code, _)? = socket.readUntilClose().close { return .close(code) }
        return socket.socket.discardReceivedAndCheckClosed() ? .dropped : .open
    }

    /// The close code the server sends after `send` (nil: none).
    private func closeCode(after send: (RawWebSocket) throws -> Void) throws -> UInt16? {
        guard case .close(let code) = try ending(after: send) else { return nil }
        return code
    }

    /// The next answer (error, ack or pong) to a message, skipping events and presence.
    private func answer(_ socket: RawWebSocket) -> JSONValue? {
        while let frame = socket.nextFrame() {
            guard case .text(let text) = frame else { return nil }
            let json = try? JSONParser.parse(text)
            if let type = json?["type"]?.stringValue, ["error", "ack", "pong"].contains(type) { return json }
        }
        return nil
    }

    private func randomBytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }

    // MARK: tests

    func testRandomBytesInsteadOfHTTPOrFrames() throws {
        for round in 0..<20 {
            let socket = try RawSocket(port: server.port, timeout: 2)
            try? socket.send(randomBytes(1 + Int(random.next() % 3000)))
            _ = socket.readToEnd()
            let framed = try welcomed()
            try? framed.socket.send(randomBytes(1 + Int(random.next() % 3000)))
            _ = framed.socket.discardReceivedAndCheckClosed()
            XCTAssertTrue(server.isRunning, "round \(round)")
        }
    }

    func testTruncatedAndMalformedJSONGetBadJSONAndTheConnectionStaysOpen() throws {
        let socket = try welcomed()
        let intent = #"{"type":"intent","id":"t","action":"face.setHappiness","value":80}"#
        var inputs = (1..<intent.utf8.count).map { String(decoding: Array(intent.utf8).prefix($0), as: UTF8.self) }
        inputs += ["", " ", "nul", "NaN", "[", "{\"a\":}", "{\"type\":\"intent\",}", "\"\\u12\"", "{\"x\":1e}", "--1"]
        for input in inputs {
            try socket.send(text: input)
            let error = try XCTUnwrap(answer(socket), "no answer to \(input)")
            XCTAssertEqual(error["type"]?.stringValue, "error", input)
            XCTAssertTrue(["bad_json", "bad_message"].contains(error["code"]?.stringValue ?? ""), "\(input): \(error)")
        }
        try socket.send(text: #"{"type":"ping","id":"alive"}"#)
        XCTAssertEqual(answer(socket)?["id"]?.stringValue, "alive")
    }

    func testDeeplyNestedJSONIsRefusedWithoutACrash() throws {
        XCTAssertEqual(try closeCode { try $0.send(text: String(repeating: "[", count: 100_000)) }, 1009,
                       "over maxMessageBytes")
        server = try ServerProcess(["limits": ["maxMessageBytes": 1_000_000]])
        let socket = try welcomed()
        for nested in [String(repeating: "[", count: 100_000), String(repeating: "[", count: 50_000) + String(repeating: "]", count: 50_000),
                       String(repeating: #"{"a":"#, count: 100_000), #"{"type":"intent","action":"dragon.forward","x":"#
                        + String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000) + "}"] {
            try socket.send(text: nested)
            let error = try XCTUnwrap(answer(socket))
            XCTAssertEqual(error["code"]?.stringValue, "bad_json", String(describing: error))
        }
    }

    func testHugeNumbersAreInvalidValuesOrClamped() throws {
        // A number reads as the nearest double: past ±1.8e308 that is an
        // infinity (not finite: invalid_value), 3000 zeros then a 1 is 0,
        // 4.9e-324 the smallest double above 0. Section 4's table then says
        // which are out of range (invalid_value) and which are clamped.
        let numbers: [(text: String, reads: Double)] = [
            ("1e400", .infinity), ("-1e400", -.infinity), ("1e308", 1e308), ("-1e308", -1e308),
            ("123456789012345678901234567890", 1.2345678901234568e29), ("9223372036854775808", 9.223372036854775808e18),
            ("-9223372036854775809", -9.223372036854775808e18), ("4.9e-324", .leastNonzeroMagnitude),
            (String(repeating: "9", count: 3000), .infinity), ("0.\(String(repeating: "0", count: 3000))1", 0),
        ]
        let actions = [("face.setHappiness", "value"), ("face.nudgeHappiness", "delta"), ("face.setScale", "value"),
                       ("face.pinch", "factor"), ("heart.setRate", "value"), ("heart.setStyle", "lineWidth")]
        var knobs = try currentKnobs()
        XCTAssertEqual(knobs, Knobs(happiness: 50, scale: 0.9, rate: 0.5, lineWidth: 1), "the default scene")
        let socket = try welcomed()
        var count = 0
        for number in numbers {
            for (action, field) in actions {
                count += 1
                let label = "\(action) \(field)=\(number.text.prefix(24))"
                try socket.send(text: #"{"type":"intent","id":"n\#(count)","action":"\#(action)","\#(field)":\#(number.text)}"#)
                let reply = try XCTUnwrap(answer(socket), label)
                XCTAssertEqual(reply["id"]?.stringValue, "n\(count)", label)
                let (expected, after) = knobs.outcome(of: action, number.reads)
                XCTAssertEqual(reply["code"]?.stringValue ?? reply["result"]?.stringValue, expected, "\(label): \(reply)")
                knobs = after
            }
        }
        XCTAssertEqual(try currentKnobs(), knobs, "the scene after every accepted number")
        try socket.send(text: #"{"type":"ping","id":"open"}"#)
        XCTAssertEqual(answer(socket)?["id"]?.stringValue, "open", "the connection stays open")
    }

    /// The scene's numeric fields, and what section 4 makes of an intent on them.
    private struct Knobs: Equatable {
        var happiness: Double, scale: Double, rate: Double, lineWidth: Double

        /// The error code or ack result of `action` with a parameter that reads
        /// as `value`, and the fields after it (scaleMin 0.1, scaleMax 2).
        func outcome(of action: String, _ value: Double) -> (String, Knobs) {
            var after = self, clamped = false
            func clamp(_ x: Double, _ range: ClosedRange<Double>) -> Double {
                if range.contains(x) { return x }
                clamped = true
                return x < range.lowerBound ? range.lowerBound : range.upperBound
            }
            let integral = value.isFinite && value == value.rounded()
            switch action {
            case "face.setHappiness" where integral: after.happiness = clamp(value, 0...100)
            case "face.nudgeHappiness" where integral && (-100...100).contains(value):
                after.happiness = clamp(happiness + value, 0...100)
            case "face.setScale" where value.isFinite && value > 0: after.scale = clamp(value, 0.1...2)
            case "face.pinch" where value.isFinite && value > 0: after.scale = clamp(scale * value, 0.1...2)
            case "heart.setRate" where value.isFinite: after.rate = clamp(value, 0...1)
            case "heart.setStyle" where (0...20).contains(value): after.lineWidth = value == 0 ? 1 : value
            default: return ("invalid_value", self)
            }
            return (after == self ? "unchanged" : clamped ? "clamped" : "applied", after)
        }
    }

    private func currentKnobs() throws -> Knobs {
        let state = try XCTUnwrap(HTTP.get("\(server.httpBase)/api/state").json?["state"])
        return Knobs(happiness: try XCTUnwrap(state["face"]?["happiness"]?.doubleValue),
                     scale: try XCTUnwrap(state["face"]?["scale"]?.doubleValue),
                     rate: try XCTUnwrap(state["heart"]?["rate"]?.doubleValue),
                     lineWidth: try XCTUnwrap(state["heart"]?["lineWidth"]?.doubleValue))
    }

    func testInvalidUTF8Closes1007() throws {
        let invalid: [[UInt8]] = [[0xFF], [0xC3, 0x28], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xC0, 0xAF],
                                  Array(#"{"type":"ping","id":""#.utf8) + [0xE2, 0x82] + Array(#""}"#.utf8)]
        for bytes in invalid {
            XCTAssertEqual(try closeCode { try $0.send(opcode: 0x1, bytes) }, 1007, "\(bytes)")
        }
        XCTAssertEqual(try closeCode { socket in
            try socket.send(opcode: 0x1, Array("{\"id\":\"".utf8) + [0xE2], fin: false)
            try socket.send(opcode: 0x0, [0x28, 0xA1] + Array("\"}".utf8))
        }, 1007, "invalid across fragments")
    }

    func testOversizeMessagesClose1009() throws {
        XCTAssertEqual(try closeCode { try $0.send(opcode: 0x1, Array(repeating: 0x20, count: 4097)) }, 1009)
        XCTAssertEqual(try closeCode { socket in
            try socket.send(opcode: 0x1, Array(repeating: 0x20, count: 1000), fin: false)
            for _ in 0..<4 { try socket.send(opcode: 0x0, Array(repeating: 0x20, count: 1000), fin: false) }
        }, 1009, "fragments adding up past the limit")
        XCTAssertEqual(try closeCode { socket in
            // A header announcing 2^62 bytes, then more than the limit of them.
            let header: [UInt8] = [0x81, 0x80 | 127, 0x40, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4]
            try socket.socket.send(header + Array(repeating: 0x20, count: 5000))
        }, 1009, "a huge announced length")
    }

    func testBinaryMessagesClose1003() throws {
        for _ in 0..<5 {
            let payload = randomBytes(1 + Int(random.next() % 500))
            XCTAssertEqual(try closeCode { try $0.send(opcode: 0x2, payload) }, 1003)
        }
    }

    func testProtocolViolationsClose1002() throws {
        // RFC 6455 7.1.7: failing the connection may or may not send a close frame first.
        let failed: Set<Ending> = [.close(1002), .dropped]
        let violations: [(String, [UInt8])] = [
            ("reserved opcode", [0x83, 0x80, 0, 0, 0, 0]),
            ("reserved control opcode", [0x8B, 0x80, 0, 0, 0, 0]),
            ("RSV1 without an extension", [0xC1, 0x81, 0, 0, 0, 0, 0x20]),
            ("ping over 125 bytes", [0x89, 0x80 | 126, 0, 200, 0, 0, 0, 0] + Array(repeating: 0, count: 200)),
            ("fragmented ping", [0x09, 0x80, 0, 0, 0, 0]),
            ("close code 999", [0x88, 0x82, 0, 0, 0, 0, 0x03, 0xE7]),
            ("continuation without a start", [0x80, 0x81, 0, 0, 0, 0, 0x20]),
        ]
        for (label, frame) in violations {
            let ending = try ending { try $0.socket.send(frame) }
            XCTAssertTrue(failed.contains(ending), "\(label): \(ending)")
        }
        let interleaved = try ending { socket in
            try socket.send(opcode: 0x1, Array("{".utf8), fin: false)
            try socket.send(opcode: 0x1, Array("{}".utf8))
        }
        XCTAssertTrue(failed.contains(interleaved), "a new message inside an unfinished one: \(interleaved)")
    }

    func testUnfinishedFragmentsCostNothingOnceTheClientGoes() throws {
        for _ in 0..<50 {
            let socket = try welcomed()
            try socket.send(opcode: 0x1, Array(repeating: 0x20, count: 4000), fin: false)
            try socket.send(opcode: 0x9, Array("still here".utf8))
            XCTAssertEqual(socket.nextFrame(), .pong(Array("still here".utf8)), "control frames interleave with fragments")
        }
        let metrics = try eventually(seconds: 5) {
            let text = try server.metricsText()
            return metricValue(text, "happy_connections") == 0 ? text : nil
        }
        XCTAssertEqual(metricValue(metrics, "happy_connections_closed_total"), 50, metrics)
    }
}
