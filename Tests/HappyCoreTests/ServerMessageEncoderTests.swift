import XCTest
import HappyCore

final class ServerMessageEncoderTests: XCTestCase {
    private let alice = Participant(id: "c7", name: "alice")

    private func text(_ bytes: [UInt8]) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    private func readBack(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) throws -> (ServerMessage, JSONValue) {
        try XCTUnwrap(ServerMessage.decode(text(bytes)), "not a JSON object: \(text(bytes))", file: file, line: line)
    }

    private func happinessEvent() -> RoomEvent {
        var scene = Scene.standard
        let outcome = SceneReducer(rules: SceneRules()).apply(.setHappiness(80), to: &scene)
        return RoomEvent(seq: 131, time: 1_764_460_000_456, room: "lobby", name: .didChangeHappiness,
                         sender: alice, changes: outcome.changes, state: scene)
    }

    private func welcome(presence: [Participant]) -> Welcome {
        var state = Scene.standard
        state.dragon.hidden = true
        return Welcome(room: "lobby", you: alice, role: .admin, epoch: "8f0c2a", seq: 130, state: state,
                       geometry: SceneGeometry(), presence: presence, presenceCount: 5,
                       serverTime: 1_764_460_000_123, recovered: true,
                       limits: WelcomeLimits(intentsPerSecond: 60, intentBurst: 120, maxMessageBytes: 4096))
    }

    // MARK: exact texts

    func testSceneJSONOfTheDefaults() {
        XCTAssertEqual(text(ServerMessageEncoder.sceneJSON(.standard)),
                       ##"{"face":{"happiness":50,"smile":0,"scale":0.9},"heart":{"rate":0.5,"fillColor":"#ff0000","strokeColor":"#000000","lineWidth":1},"dragon":{"x":10,"y":10,"hidden":false}}"##)
    }

    func testAckText() {
        XCTAssertEqual(text(ServerMessageEncoder.ack(id: "abc", seq: 131, result: .applied)),
                       #"{"type":"ack","id":"abc","seq":131,"result":"applied"}"#)
        XCTAssertEqual(text(ServerMessageEncoder.ack(id: nil, seq: 0, result: .blocked)),
                       #"{"type":"ack","seq":0,"result":"blocked"}"#)
    }

    func testErrorText() {
        let error = WireError(.invalidValue, "happiness must be an integer", id: "abc")
        XCTAssertEqual(text(ServerMessageEncoder.error(error)),
                       #"{"type":"error","id":"abc","code":"invalid_value","message":"happiness must be an integer"}"#)
        XCTAssertEqual(text(ServerMessageEncoder.error(WireError(.badJSON, "x"))),
                       #"{"type":"error","code":"bad_json","message":"x"}"#)
    }

    func testPresenceAndPongTexts() {
        let bob = Participant(id: "c8", name: "bob")
        XCTAssertEqual(text(ServerMessageEncoder.presence(joined: bob)),
                       #"{"type":"presence","joined":{"id":"c8","name":"bob"}}"#)
        XCTAssertEqual(text(ServerMessageEncoder.presence(left: bob)),
                       #"{"type":"presence","left":{"id":"c8","name":"bob"}}"#)
        XCTAssertEqual(text(ServerMessageEncoder.pong(id: "x", serverTime: 1_764_460_000_999)),
                       #"{"type":"pong","id":"x","serverTime":1764460000999}"#)
        XCTAssertEqual(text(ServerMessageEncoder.pong(id: nil, serverTime: 5)), #"{"type":"pong","serverTime":5}"#)
    }

    func testEventNumbersPrintWithoutTrailingZeros() {
        let event = text(ServerMessageEncoder.event(happinessEvent()))
        XCTAssertTrue(event.contains(#""changes":[{"path":"face.happiness","from":50,"to":80},{"path":"face.smile","from":0,"to":0.6}]"#), event)
        XCTAssertTrue(event.hasPrefix(#"{"type":"event","seq":131,"room":"lobby","time":1764460000456,"name":"faceView:didChangeHappiness:","sender":{"id":"c7","name":"alice"}"#), event)
        XCTAssertFalse(event.contains(".0,"), event)
        XCTAssertFalse(event.contains(".0}"), event)
    }

    // MARK: round trips

    func testEventRoundTrip() throws {
        let original = happinessEvent()
        let (message, json) = try readBack(ServerMessageEncoder.event(original))
        guard case .event(let event) = message else { return XCTFail("decoded as \(message)") }
        XCTAssertEqual(event.seq, 131)
        XCTAssertEqual(event.room, "lobby")
        XCTAssertEqual(event.time, 1_764_460_000_456)
        XCTAssertEqual(event.name, "faceView:didChangeHappiness:")
        XCTAssertEqual(event.sender, alice)
        XCTAssertEqual(event.changes.map(\.path), ["face.happiness", "face.smile"])
        XCTAssertEqual(event.changes.map(\.from), [.number(50), .number(0)])
        XCTAssertEqual(event.changes.map(\.to), [.number(80), .number(0.6)])
        XCTAssertEqual(event.state, original.state)
        XCTAssertEqual(json["state"]?["face"]?["smile"], .number(0.6))
    }

    func testBlockedEventHasAnEmptyChangeList() throws {
        let event = RoomEvent(seq: 2, time: 0, room: "r", name: .backButtonClicked, sender: alice,
                              changes: [], state: .standard)
        let bytes = ServerMessageEncoder.event(event)
        XCTAssertTrue(text(bytes).contains(#""changes":[]"#))
        guard case .event(let decoded) = try readBack(bytes).0 else { return XCTFail("not an event") }
        XCTAssertEqual(decoded.name, "backButtonClicked:")
        XCTAssertTrue(decoded.changes.isEmpty)
    }

    func testColourAndBooleanChangesRoundTrip() throws {
        let changes = [
            SceneChange(path: .heartFillColor, from: .color(RGBColor(red: 255, green: 0, blue: 0)),
                        to: .color(RGBColor(red: 0xAB, green: 0xCD, blue: 0xEF))),
            SceneChange(path: .dragonHidden, from: .bool(false), to: .bool(true)),
        ]
        let event = RoomEvent(seq: 9, time: 1, room: "r", name: .didChangeStyle, sender: alice, changes: changes, state: .standard)
        guard case .event(let decoded) = try readBack(ServerMessageEncoder.event(event)).0 else { return XCTFail("not an event") }
        XCTAssertEqual(decoded.changes.map(\.from), [.string("#ff0000"), .bool(false)])
        XCTAssertEqual(decoded.changes.map(\.to), [.string("#abcdef"), .bool(true)])
    }

    func testWelcomeRoundTrip() throws {
        let presence = [alice, Participant(id: "c8", name: "bob")]
        let (message, json) = try readBack(ServerMessageEncoder.welcome(welcome(presence: presence)))
        guard case .welcome(let decoded) = message else { return XCTFail("decoded as \(message)") }
        XCTAssertEqual(decoded.room, "lobby")
        XCTAssertEqual(decoded.you, alice)
        XCTAssertEqual(decoded.role, "admin")
        XCTAssertEqual(decoded.epoch, "8f0c2a")
        XCTAssertEqual(decoded.seq, 130)
        XCTAssertEqual(decoded.state, welcome(presence: []).state)
        XCTAssertEqual(decoded.presence, presence)
        XCTAssertEqual(decoded.presenceCount, 5)
        XCTAssertEqual(decoded.serverTime, 1_764_460_000_123)
        XCTAssertTrue(decoded.recovered)
        XCTAssertEqual(json["protocol"], .number(1))
        XCTAssertEqual(json["scene"], .object([("width", .number(375)), ("height", .number(180)),
                                               ("dragonSize", .number(100)), ("step", .number(10))]))
        XCTAssertEqual(json["limits"], .object([("intentsPerSecond", .number(60)), ("intentBurst", .number(120)),
                                                ("maxMessageBytes", .number(4096))]))
        XCTAssertTrue(text(ServerMessageEncoder.welcome(welcome(presence: []))).contains(#""intentsPerSecond":60,"#))
    }

    func testPresenceEntriesAppendedInPlaceMatchTheWholeList() {
        let bob = Participant(id: "c8", name: "bo\"b")
        var array = ServerMessageEncoder.presenceArray([])
        ServerMessageEncoder.appendPresenceEntry(alice, to: &array)
        XCTAssertEqual(array, ServerMessageEncoder.presenceArray([alice]))
        ServerMessageEncoder.appendPresenceEntry(bob, to: &array)
        XCTAssertEqual(array, ServerMessageEncoder.presenceArray([alice, bob]))
    }

    func testWelcomeWithEncodedPartsMatchesTheEncodedWelcome() {
        let presence = [alice, Participant(id: "c8", name: "bob")]
        var shared = welcome(presence: [])
        shared.encodedPresence = ServerMessageEncoder.presenceArray(presence)
        shared.encodedState = ServerMessageEncoder.sceneObject(shared.state)
        shared.encodedConstants = ServerMessageEncoder.welcomeConstants(geometry: shared.geometry, limits: shared.limits)
        XCTAssertEqual(text(ServerMessageEncoder.welcome(shared)),
                       text(ServerMessageEncoder.welcome(welcome(presence: presence))))
    }

    func testResyncRoundTripWithAndWithoutPresence() throws {
        var state = Scene.standard
        state.heart.rate = 0.25
        let plain = ServerMessageEncoder.resync(seq: 180, state: state, presence: nil)
        XCTAssertFalse(text(plain).contains("presence"))
        guard case .resync(let seq, let decodedState) = try readBack(plain).0 else { return XCTFail("not a resync") }
        XCTAssertEqual(seq, 180)
        XCTAssertEqual(decodedState, state)

        let withPresence = ServerMessageEncoder.resync(seq: 181, state: state, presence: [alice], presenceCount: 3)
        let json = try readBack(withPresence).1
        XCTAssertEqual(json["presence"], .array([.object([("id", .string("c7")), ("name", .string("alice"))])]))
        XCTAssertEqual(json["presenceCount"], .number(3))
    }

    func testAckErrorPresencePongRoundTrip() throws {
        guard case .ack(let id, let seq, let result) = try readBack(ServerMessageEncoder.ack(id: "a", seq: 7, result: .clamped)).0
        else { return XCTFail("not an ack") }
        XCTAssertEqual(id, "a")
        XCTAssertEqual(seq, 7)
        XCTAssertEqual(result, "clamped")

        let original = WireError(.rateLimited, "slow \"down\"\n\\ please", id: "r")
        guard case .error(let error) = try readBack(ServerMessageEncoder.error(original)).0 else { return XCTFail("not an error") }
        XCTAssertEqual(error, original)

        guard case .presence(let joined, let left) = try readBack(ServerMessageEncoder.presence(left: alice)).0
        else { return XCTFail("not a presence") }
        XCTAssertNil(joined)
        XCTAssertEqual(left, alice)

        guard case .pong(let pongID, let time) = try readBack(ServerMessageEncoder.pong(id: "p", serverTime: 42)).0
        else { return XCTFail("not a pong") }
        XCTAssertEqual(pongID, "p")
        XCTAssertEqual(time, 42)
    }

    func testStringsWithSpecialCharactersRoundTrip() throws {
        let tricky = "a\"b\\c\n\t\u{1}é😀你</script>"
        let sender = Participant(id: "q\"1", name: tricky)
        let event = RoomEvent(seq: 1, time: 0, room: "r", name: .didReset, sender: sender, changes: [], state: .standard)
        guard case .event(let decoded) = try readBack(ServerMessageEncoder.event(event)).0 else { return XCTFail("not an event") }
        XCTAssertEqual(decoded.sender, sender)
    }

    func testRoomState() throws {
        let json = try JSONParser.parse(text(ServerMessageEncoder.roomState(
            room: "lobby", epoch: "e", seq: 4, state: .standard, presence: [alice], presenceCount: 1)))
        XCTAssertEqual(json["room"], .string("lobby"))
        XCTAssertEqual(json["epoch"], .string("e"))
        XCTAssertEqual(json["seq"], .number(4))
        XCTAssertEqual(json["state"].flatMap(Scene.init(json:)), .standard)
        XCTAssertEqual(json["presenceCount"], .number(1))
    }

    // MARK: headroom and decoding edge cases

    func testHeadroomIsZeroAndPrecedesTheSameMessage() {
        let plain = ServerMessageEncoder.ack(id: "abc", seq: 1, result: .unchanged)
        let framed = ServerMessageEncoder.ack(id: "abc", seq: 1, result: .unchanged, headroom: 14)
        XCTAssertEqual(Array(framed.prefix(14)), [UInt8](repeating: 0, count: 14))
        XCTAssertEqual(Array(framed.dropFirst(14)), plain)
        let event = ServerMessageEncoder.event(happinessEvent(), headroom: 10)
        XCTAssertEqual(Array(event.dropFirst(10)), ServerMessageEncoder.event(happinessEvent()))
        XCTAssertEqual(Array(ServerMessageEncoder.pong(id: nil, serverTime: 1, headroom: 4).prefix(4)), [0, 0, 0, 0])
    }

    func testDecodeRejectsNonObjectsAndKeepsUnknownTypes() throws {
        XCTAssertNil(ServerMessage.decode("[1]"))
        XCTAssertNil(ServerMessage.decode("not json"))
        guard case .other(let json) = try XCTUnwrap(ServerMessage.decode(#"{"type":"news","x":1}"#)).0
        else { return XCTFail("expected .other") }
        XCTAssertEqual(json["x"], .number(1))
    }
}
