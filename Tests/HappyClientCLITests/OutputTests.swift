@testable import HappyClientCLI
import HappyClientKit
import HappyCore
import XCTest

/// The lines commands print: acks, events, presence, state, ping.
final class OutputTests: XCTestCase {
    private func scene(_ change: (inout Scene) -> Void = { _ in }) -> Scene {
        var scene = Scene.standard
        change(&scene)
        return scene
    }

    private func event(_ text: String) -> EventMessage {
        guard case .event(let event)? = ServerMessage.decode(text)?.0 else { fatalError("bad event: \(text)") }
        return event
    }

    private func eventText(seq: Int, name: String, changes: String, dragonX: Double = 10,
                           hidden: Bool = false, sender: String = "alice") -> String {
        """
        {"type":"event","seq":\(seq),"room":"lobby","time":1764504245000,"name":"\(name)",\
        "sender":{"id":"c7","name":"\(sender)"},"changes":[\(changes)],\
        "state":{"face":{"happiness":80,"smile":0.6,"scale":1.32},\
        "heart":{"rate":0.7,"fillColor":"#ff0000","strokeColor":"#000000","lineWidth":2},\
        "dragon":{"x":\(dragonX),"y":10,"hidden":\(hidden)}}}
        """
    }

    func testAckLines() {
        func line(_ action: Action, _ result: AckResult, _ scene: Scene) -> String {
            IntentReport.line(for: action, IntentOutcome(result: result, seq: 1, state: scene))
        }
        XCTAssertEqual(line(.setHappiness(80), .applied, scene { $0.face.happiness = 80 }), "applied  happiness 80")
        XCTAssertEqual(line(.dragonForward, .blocked, scene { $0.dragon.x = 270 }), "blocked  dragon (270, 10)")
        XCTAssertEqual(line(.setScale(5), .clamped, scene { $0.face.scale = 2 }), "clamped  scale 2")
        XCTAssertEqual(line(.pinch(1.1), .applied, scene { $0.face.scale = 0.9 * 1.1 }), "applied  scale 0.99")
        XCTAssertEqual(line(.setRate(0.7), .applied, scene { $0.heart.rate = 0.7 }), "applied  heart rate 0.7")
        XCTAssertEqual(line(.setStyle(HeartStyle(lineWidth: 2)), .applied, scene { $0.heart.lineWidth = 2 }),
                       "applied  heart fill #ff0000 stroke #000000 width 2")
        XCTAssertEqual(line(.toggleHidden, .applied, scene { $0.dragon.hidden = true }), "applied  dragon hidden")
        XCTAssertEqual(line(.reset, .unchanged, scene()),
                       "unchanged  room happiness 50, scale 0.9, heart rate 0.5, dragon (10, 10) shown")
    }

    func testWatchLinesForEvents() {
        let lines = EventLines(offsetSeconds: 0)
        let forward = event(eventText(seq: 131, name: "forwardButtonClicked:",
                                      changes: #"{"path":"dragon.x","from":10,"to":20}"#, dragonX: 20))
        XCTAssertEqual(lines.event(forward), "12:04:05 #131 alice  dragon (10, 10) → (20, 10)  forwardButtonClicked:")
        let blocked = event(eventText(seq: 132, name: "backButtonClicked:", changes: ""))
        XCTAssertEqual(lines.event(blocked), "12:04:05 #132 alice  dragon (10, 10), blocked at the edge  backButtonClicked:")
        let happiness = event(eventText(seq: 1, name: "faceView:didChangeHappiness:",
                                        changes: #"{"path":"face.happiness","from":50,"to":80}"#))
        XCTAssertEqual(EventLines.summary(of: happiness), "happiness 50 → 80")
        let style = event(eventText(seq: 2, name: "heartView:didChangeStyle:",
                                    changes: ##"{"path":"heart.fillColor","from":"#ff0000","to":"#00ff00"},"##
                                        + #"{"path":"heart.lineWidth","from":1,"to":2.5}"#))
        XCTAssertEqual(EventLines.summary(of: style), "heart fill #ff0000 → #00ff00, width 1 → 2.5")
        let scale = event(eventText(seq: 2, name: "faceView:didChangeScale:",
                                    changes: #"{"path":"face.scale","from":0.9,"to":0.99}"#))
        XCTAssertEqual(EventLines.summary(of: scale), "scale 0.9 → 0.99")
        let hidden = event(eventText(seq: 3, name: "dragonView:didChangeHidden:",
                                     changes: #"{"path":"dragon.hidden","from":false,"to":true}"#, hidden: true))
        XCTAssertEqual(EventLines.summary(of: hidden), "dragon hidden")
        XCTAssertEqual(EventLines(offsetSeconds: 3600).event(forward).prefix(8), "13:04:05", "local time")
    }

    func testWatchLinesForPresenceAndResync() {
        let lines = EventLines(offsetSeconds: 0)
        let bob = Participant(id: "c8", name: "bob")
        XCTAssertEqual(lines.presence(.joined(bob), atMilliseconds: 1764504247000), "12:04:07 bob (c8) joined")
        XCTAssertEqual(lines.presence(.left(bob), atMilliseconds: 1764504247000), "12:04:07 bob (c8) left")
        XCTAssertEqual(lines.resync(seq: 180, state: .standard, atMilliseconds: 1764504249000),
                       "12:04:09 resync #180 (events before it were skipped): happiness 50, scale 0.9, heart rate 0.5, dragon (10, 10) shown")
    }

    func testTimesOfDay() {
        XCTAssertEqual(TimeOfDay.format(milliseconds: 0, offsetSeconds: 0), "00:00:00")
        XCTAssertEqual(TimeOfDay.format(milliseconds: 1764504245999, offsetSeconds: 0), "12:04:05")
        XCTAssertEqual(TimeOfDay.format(milliseconds: 3_600_000, offsetSeconds: -7200), "23:00:00")
    }

    func testNumbers() {
        XCTAssertEqual(Describe.number(2), "2")
        XCTAssertEqual(Describe.number(0.9), "0.9")
        XCTAssertEqual(Describe.number(0.9 * 1.1 * 1.1 * 1.1), "1.198")
        XCTAssertEqual(Describe.number(-5), "-5")
        XCTAssertEqual(Describe.number(0.0001), "0")
    }

    func testStateReport() throws {
        let text = """
            {"type":"welcome","protocol":1,"room":"kitchen","you":{"id":"c9","name":"me","role":"player"},\
            "epoch":"8f0c2a","seq":130,"state":{"face":{"happiness":80,"smile":0.6,"scale":0.9},\
            "heart":{"rate":0.5,"fillColor":"#ff0000","strokeColor":"#000000","lineWidth":1},\
            "dragon":{"x":20,"y":10,"hidden":true}},"scene":{"width":375,"height":180,"dragonSize":100,"step":10},\
            "presence":[{"id":"c7","name":"alice"},{"id":"c9","name":"me"}],"presenceCount":2,\
            "serverTime":1764460000123,"recovered":false,"limits":{"intentsPerSecond":60,"intentBurst":120,"maxMessageBytes":4096}}
            """
        guard let (message, json) = ServerMessage.decode(text), case .welcome(let welcome) = message else {
            return XCTFail("bad welcome")
        }
        let report = StateReport(welcome: welcome, json: json)
        XCTAssertEqual(report.text, """
            room     kitchen   seq 130   epoch 8f0c2a
            face     happiness 80 (smile 0.6)   scale 0.9
            heart    rate 0.5   fill #ff0000   stroke #000000   width 1
            dragon   (20, 10)   hidden
            here     1 other: alice (c7)
            """)
        let parsed = try JSONParser.parse(report.jsonText)
        XCTAssertEqual(parsed["room"], .string("kitchen"))
        XCTAssertEqual(parsed["seq"], .number(130))
        XCTAssertEqual(parsed["epoch"], .string("8f0c2a"))
        XCTAssertEqual(parsed["state"], json["state"])
        XCTAssertEqual(parsed["presence"], try JSONParser.parse(#"[{"id":"c7","name":"alice"}]"#))
        XCTAssertEqual(parsed["presenceCount"], .number(1))
    }

    /// An observer is not in the presence it reads: everyone listed is someone else, and counted.
    func testStateReportOfAnObserver() throws {
        let text = """
            {"type":"welcome","protocol":1,"room":"kitchen","you":{"id":"c9","name":"me","role":"player"},\
            "epoch":"8f0c2a","seq":0,"state":{"face":{"happiness":50,"smile":0,"scale":0.9},\
            "heart":{"rate":0.5,"fillColor":"#ff0000","strokeColor":"#000000","lineWidth":1},\
            "dragon":{"x":10,"y":10,"hidden":false}},"scene":{"width":375,"height":180,"dragonSize":100,"step":10},\
            "presence":[{"id":"c7","name":"alice"}],"presenceCount":1,"observerCount":1,\
            "serverTime":1764460000123,"recovered":false,"limits":{"intentsPerSecond":60,"intentBurst":120,"maxMessageBytes":4096}}
            """
        guard let (message, json) = ServerMessage.decode(text), case .welcome(let welcome) = message else {
            return XCTFail("bad welcome")
        }
        let report = StateReport(welcome: welcome, json: json, observing: true)
        XCTAssertTrue(report.text.hasSuffix("here     1 person: alice (c7)"), report.text)
        XCTAssertEqual(try JSONParser.parse(report.jsonText)["presenceCount"], .number(1))
        XCTAssertFalse(welcome.isNewRoom(observing: true), "alice is here")
        XCTAssertTrue(welcome.isNewRoom(observing: false), "as a member, alice would be this client")
    }

    func testOperatorTablesAndLines() throws {
        let now: Int64 = 1_000_000_000
        let rooms = try [
            #"{"room":"kitchen","epoch":"e1","seq":48,"clients":12,"observers":1,"delivery":"each","lastEventTime":999995000}"#,
            #"{"room":"lobby","epoch":null,"seq":0,"clients":0,"observers":0,"delivery":"ticks","lastEventTime":null}"#,
        ].map { try XCTUnwrap(RoomSummary(JSONParser.parse($0))) }
        XCTAssertEqual(OperatorReport.rooms(rooms, nowMilliseconds: now), [
            "ROOM     PEOPLE  OBSERVERS  SEQ  DELIVERY  LAST EVENT",
            "kitchen      12          1   48  each      5 s ago",
            "lobby         0          0    0  ticks     none",
        ])
        XCTAssertNil(RoomSummary(try JSONParser.parse(#"{"room":"x","seq":-1,"clients":0,"observers":0}"#)))
        XCTAssertEqual([0, 119_999, 120_000, 7_199_999, 7_200_000, 172_800_000].map { OperatorReport.age($0) },
                       ["0 s", "119 s", "2 min", "119 min", "2 h", "2 d"])
        XCTAssertEqual([0, 999, 1000, 12_345, 3_100_000].map(OperatorReport.bytes), ["0 B", "999 B", "1 KB", "12.3 KB", "3.1 MB"])
        XCTAssertEqual(OperatorReport.kicked(1, KickOptions(room: "hall", target: .id("c7"))), "kicked 1 connection (id c7) from room hall")
        XCTAssertEqual(OperatorReport.kicked(2, KickOptions(room: "hall", target: .name("eve"))),
                       "kicked 2 connections (named eve) from room hall")
        XCTAssertEqual(OperatorReport.kicked(0, KickOptions(room: "hall", target: .name("eve"))),
                       "nobody to kick: no connection named eve in room hall")
    }

    func testPingSummary() {
        let samples = [PingSample(sentAt: 0, receivedAt: 2, serverTime: 11), PingSample(sentAt: 10, receivedAt: 11, serverTime: 20)]
        XCTAssertEqual(PingSummary(samples: samples).lines, [
            "rtt min/avg/max = 1.00/1.50/2.00 ms over 2 pings",
            "clock offset +9.50 ms (the server's clock is ahead of this one; ±0.50 ms)",
        ])
        XCTAssertEqual(PingSummary(samples: []).lines, [])
    }
}
