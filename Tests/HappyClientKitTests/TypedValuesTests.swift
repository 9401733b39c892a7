import HappyClientKit
import XCTest

/// The kit's typed values, without a network: close reasons, addresses,
/// events and ticks read from the wire.
final class TypedValuesTests: XCTestCase {
    func testCloseCodesAreKinds() {
        XCTAssertEqual(CloseReason(code: 1008, reason: "invalid room name").kind, .policyViolation)
        XCTAssertEqual(CloseReason(code: 4003, reason: "removed from the room by an operator: spam").kind, .kicked)
        XCTAssertEqual(CloseReason(code: 4004, reason: "").kind, .roomDeleted)
        XCTAssertEqual(CloseReason(code: 1002, reason: "server full").kind, .tryAgainLater, "lws reports 1013 as 1002")
        XCTAssertEqual(CloseReason(code: nil, reason: "").kind, .noCloseFrame)
        XCTAssertEqual(CloseReason(code: 4321, reason: "").kind, .other(4321))
    }

    func testAnAddressIsCheckedNotTrusted() throws {
        XCTAssertEqual(try WebSocketURL(validating: " ws://127.0.0.1:8080 ").port, 8080)
        XCTAssertEqual(try WebSocketURL(validating: "https://example.org").secure, true)
        for (text, reason) in [("127.0.0.1:8080", "must start with ws://"), ("ws://:80", "no host"),
                               ("ws://host:0", "a port outside 1-65535")] {
            XCTAssertThrowsError(try WebSocketURL(validating: text)) { error in
                guard case SessionError.invalidURL(let url, let why)? = error as? SessionError else { return XCTFail("\(error)") }
                XCTAssertEqual(url, text)
                XCTAssertTrue(why.contains(reason), why)
            }
        }
    }

    func testAnEventAndATickAreReadAsTypedValues() throws {
        let scene = ##"{"face":{"happiness":50,"scale":0.9},"heart":{"rate":0.5,"fillColor":"#ff0000","strokeColor":"#000000","lineWidth":1},"dragon":{"x":20,"y":10,"hidden":false}}"##
        let eventText = #"{"type":"event","room":"r","seq":4,"time":7,"name":"forwardButtonClicked:","sender":{"id":"c1","name":"ann"},"changes":[{"path":"dragon.x","from":10,"to":20}],"state":"# + scene + "}"
        guard case .event(let message)? = ServerMessage.decode(eventText)?.0 else { return XCTFail("not an event") }
        let event = HappyEvent(message)
        XCTAssertEqual(event.name, .forwardButtonClicked)
        XCTAssertEqual(event.sender?.name, "ann")
        XCTAssertEqual(event.changes, [SceneChange(path: .dragonX, from: .number(10), to: .number(20))])
        XCTAssertNil(event.votes)

        let voted = #"{"type":"event","room":"r","seq":5,"time":8,"name":"backButtonClicked:","sender":null,"votes":{"forward":2,"back":3},"changes":[],"state":"# + scene + "}"
        guard case .event(let crowd)? = ServerMessage.decode(voted)?.0 else { return XCTFail("not an event") }
        XCTAssertNil(HappyEvent(crowd).sender, "the crowd moved it")
        XCTAssertEqual(HappyEvent(crowd).votes, Votes(forward: 2, back: 3))

        let tickText = #"{"type":"tick","room":"r","from":6,"seq":9,"time":9,"names":{"forwardButtonClicked:":3,"room:somethingNew:":1},"senders":[{"id":"c2","name":"bo"}],"senderCount":4,"changes":[{"path":"room.glow","from":0,"to":1},{"path":"heart.rate","from":0.5,"to":1}],"state":"# + scene + "}"
        guard case .tick(let tickMessage)? = ServerMessage.decode(tickText)?.0 else { return XCTFail("not a tick") }
        let tick = HappyTick(tickMessage)
        XCTAssertEqual(tick.eventCount, 4)
        XCTAssertEqual(tick.names.map(\.name), [.forwardButtonClicked, nil], "a name the kit does not know is kept as sent")
        XCTAssertEqual(tick.names.last?.delegateName, "room:somethingNew:")
        XCTAssertEqual(tick.changes, [SceneChange(path: .heartRate, from: .number(0.5), to: .number(1))],
                       "a path the kit does not know is left out")
        XCTAssertEqual(RoomUpdate.tick(tick).seq, 9)
    }
    func testAnIPv6AddressKeepsItsBracketsWhenWrittenOut() throws {
        let url = try WebSocketURL(validating: "ws://[::1]:8080/ws")
        XCTAssertEqual(url.host, "::1")
        XCTAssertEqual(url.description, "ws://[::1]:8080/ws")
        XCTAssertEqual(url.httpBase, "http://[::1]:8080")
        XCTAssertEqual(WebSocketURL(url.description), url, "what it writes reads back")
        XCTAssertEqual(try WebSocketURL(validating: "ws://127.0.0.1:80").authority, "127.0.0.1:80")
    }

    /// A tied vote's ack names no event (seq 0): its outcome's scene is the current one.
    func testATiedVotesStateIsTheCurrentOne() {
        var ledger = RoomLedger()
        _ = ledger.welcome(SessionFixtures.welcome(seq: 0))
        _ = ledger.event(SessionFixtures.event(seq: 1, happiness: 61))
        _ = ledger.event(SessionFixtures.event(seq: 2, happiness: 62))
        XCTAssertEqual(ledger.state(after: 0)?.face.happiness, 62)
    }

    /// A welcome whose limits no Int can hold is read as having none, not a trap.
    func testLimitsOutOfRangeAreNotTrusted() throws {
        for (burst, bytes) in [("1e300", "4096"), ("120", "-1e30"), ("120", "4096.7")] {
            let json = try JSONParser.parse(Array(#"{"limits":{"intentsPerSecond":60,"intentBurst":\#(burst),"maxMessageBytes":\#(bytes)}}"#.utf8))
            let limits = WelcomeLimits(welcome: json)
            if bytes == "4096.7" {
                XCTAssertEqual(limits?.maxMessageBytes, 4096)
            } else {
                XCTAssertNil(limits, "\(burst) \(bytes)")
            }
        }
    }
}
