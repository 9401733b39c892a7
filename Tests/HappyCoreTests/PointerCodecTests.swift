import HappyCore
import XCTest

/// Pointer messages (PROTOCOL.md section 10): decoding with its errors, and
/// the encoding of entries and batches.
final class PointerCodecTests: XCTestCase {
    private func decode(_ text: String) -> Result<ClientMessage, WireError> {
        ClientMessageDecoder.decode(text)
    }

    func testAPointerDecodesWithItsActivityOrIdle() {
        XCTAssertEqual(try decode(#"{"type":"pointer","view":"face","x":0.42,"y":0.61,"activity":"drag"}"#).get(),
                       .pointer(PointerPosition(view: .face, x: 0.42, y: 0.61, activity: .drag)))
        XCTAssertEqual(try decode(#"{"type":"pointer","view":"dragon","x":0,"y":1}"#).get(),
                       .pointer(PointerPosition(view: .dragon, x: 0, y: 1, activity: .idle)))
    }

    func testANullViewHidesThePointer() {
        XCTAssertEqual(try decode(#"{"type":"pointer","view":null}"#).get(), .pointer(nil))
    }

    func testInvalidFieldsAreInvalidValueNamingTheField() {
        let cases: [(String, String)] = [
            (#"{"type":"pointer","view":"nose","x":0.5,"y":0.5}"#, "view"),
            (#"{"type":"pointer","x":0.5,"y":0.5}"#, "view"),
            (#"{"type":"pointer","view":"face","x":1.01,"y":0.5}"#, "x"),
            (#"{"type":"pointer","view":"face","x":0.5,"y":-1}"#, "y"),
            (#"{"type":"pointer","view":"face","x":"0.5","y":0.5}"#, "x"),
            (#"{"type":"pointer","view":"face","y":0.5}"#, "x"),
            (#"{"type":"pointer","view":"heart","x":0.5,"y":0.5,"activity":"dance"}"#, "activity"),
            (#"{"type":"pointer","view":"heart","x":0.5,"y":0.5,"activity":7}"#, "activity"),
        ]
        for (text, field) in cases {
            guard case .failure(let error) = decode(text) else { XCTFail("accepted \(text)"); continue }
            XCTAssertEqual(error.code, .invalidValue, text)
            XCTAssertTrue(error.message.contains(field), "\(text): \(error.message)")
        }
    }

    func testAnEntryAndABatchEncodeAsTheProtocolShows() throws {
        let entry = PointerEntry(id: "c7", name: "alice", position: PointerPosition(view: .face, x: 0.42, y: 0.61,
                                                                                     activity: .drag))
        let encoded = ServerMessageEncoder.pointerEntry(entry)
        XCTAssertEqual(String(decoding: encoded, as: UTF8.self),
                       #"{"id":"c7","name":"alice","view":"face","x":0.42,"y":0.61,"activity":"drag"}"#)
        let batch = ServerMessageEncoder.pointers(room: "lobby", entries: [encoded], gone: ["c9"])
        let json = try JSONParser.parse(batch)
        XCTAssertEqual(json["type"]?.stringValue, "pointers")
        XCTAssertEqual(json["room"]?.stringValue, "lobby")
        XCTAssertEqual(json["gone"], .array([.string("c9")]))
        guard case .array(let list)? = json["pointers"] else { return XCTFail("no pointers array") }
        XCTAssertEqual(list.first?["name"]?.stringValue, "alice")
        XCTAssertEqual(String(decoding: ServerMessageEncoder.pointerArray([[UInt8]]()), as: UTF8.self), "[]")
    }

    func testTheWelcomeCarriesItsPointerList() throws {
        var welcome = Welcome(room: "lobby", you: Participant(id: "c1", name: "a"), role: .player, epoch: "e", seq: 0,
                              state: .standard, geometry: SceneGeometry(), presence: [], presenceCount: 1,
                              serverTime: 0, recovered: false,
                              limits: WelcomeLimits(intentsPerSecond: 60, intentBurst: 120, maxMessageBytes: 4096))
        XCTAssertEqual(try JSONParser.parse(ServerMessageEncoder.welcome(welcome))["pointers"], .array([]))
        welcome.encodedPointers = ServerMessageEncoder.pointerArray([ServerMessageEncoder.pointerEntry(
            PointerEntry(id: "c2", name: "b", position: PointerPosition(view: .heart, x: 0.1, y: 0.2)))])
        let listed = try JSONParser.parse(ServerMessageEncoder.welcome(welcome))["pointers"]
        guard case .array(let list)? = listed else { return XCTFail("no pointers") }
        XCTAssertEqual(list.first?["id"]?.stringValue, "c2")
    }
}
