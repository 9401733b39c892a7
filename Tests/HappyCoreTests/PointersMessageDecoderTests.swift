import HappyCore
import XCTest

/// The client side of live pointers (PROTOCOL.md section 10): `pointers`
/// messages and `welcome.pointers`, as a client reads them.
final class PointersMessageDecoderTests: XCTestCase {
    private let state = String(decoding: ServerMessageEncoder.sceneJSON(.standard), as: UTF8.self)

    private func pointers(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> PointersMessage? {
        guard case .pointers(let message)? = ServerMessage.decode(text)?.0 else {
            XCTFail("not a pointers message: \(text)", file: file, line: line)
            return nil
        }
        return message
    }

    func testABatchDecodesItsEntriesAndGoneIDs() {
        let message = pointers("""
            {"type":"pointers","room":"lobby","pointers":[\
            {"id":"c7","name":"alice","view":"face","x":0.42,"y":0.61,"activity":"drag"},\
            {"id":"c8","name":"bob","view":"dragon","x":0,"y":1,"activity":"press"}],"gone":["c9"]}
            """)
        XCTAssertEqual(message, PointersMessage(room: "lobby", pointers: [
            PointerEntry(id: "c7", name: "alice", position: PointerPosition(view: .face, x: 0.42, y: 0.61, activity: .drag)),
            PointerEntry(id: "c8", name: "bob", position: PointerPosition(view: .dragon, x: 0, y: 1, activity: .press)),
        ], gone: ["c9"]))
    }

    func testTheServersOwnEncodingReadsBack() throws {
        let entry = PointerEntry(id: "c1", name: "zoë \"z\"", position: PointerPosition(view: .heart, x: 0.125, y: 0.5, activity: .pinch))
        let bytes = ServerMessageEncoder.pointers(room: "r", entries: [ServerMessageEncoder.pointerEntry(entry)], gone: ["c2", "c3"])
        XCTAssertEqual(pointers(String(decoding: bytes, as: UTF8.self)),
                       PointersMessage(room: "r", pointers: [entry], gone: ["c2", "c3"]))
    }

    func testMissingListsAreEmptyAndUnreadableEntriesAreLeftOut() {
        XCTAssertEqual(pointers(#"{"type":"pointers","room":"r","gone":["c2"]}"#),
                       PointersMessage(room: "r", pointers: [], gone: ["c2"]))
        XCTAssertEqual(pointers(#"{"type":"pointers"}"#), PointersMessage(room: "", pointers: [], gone: []))
        let message = pointers("""
            {"type":"pointers","room":"r","pointers":[\
            {"id":"c1","name":"a","view":"nose","x":0.5,"y":0.5},\
            {"name":"a","view":"face","x":0.5,"y":0.5},\
            {"id":"c1","name":"a","view":"face","x":"0.5","y":0.5},\
            {"id":"c1","name":"a","view":"face","x":0.5,"y":1e400},\
            {"id":"c2","name":"b","view":"heart","x":0.5,"y":0.5}],"gone":["c3",7,null]}
            """)
        XCTAssertEqual(message?.pointers.map(\.id), ["c2"])
        XCTAssertEqual(message?.gone, ["c3"], "ids that are not strings are left out")
    }

    func testActivityDefaultsToIdleAndCoordinatesStayInTheView() {
        let message = pointers("""
            {"type":"pointers","room":"r","pointers":[\
            {"id":"c1","name":"a","view":"face","x":1.5,"y":-0.25},\
            {"id":"c2","name":"b","view":"heart","x":0.5,"y":0.5,"activity":"juggle"}],"gone":[]}
            """)
        XCTAssertEqual(message?.pointers.first?.position, PointerPosition(view: .face, x: 1, y: 0, activity: .idle))
        XCTAssertEqual(message?.pointers.last?.position.activity, .idle, "an activity this client does not know")
    }

    func testTheWelcomeListsTheVisiblePointers() {
        let text = """
            {"type":"welcome","room":"r","you":{"id":"c1","name":"n"},"epoch":"e","seq":3,"state":\(state),\
            "pointers":[{"id":"c7","name":"alice","view":"heart","x":0.25,"y":0.75,"activity":"idle"}]}
            """
        guard case .welcome(let welcome)? = ServerMessage.decode(text)?.0 else { return XCTFail("not a welcome") }
        XCTAssertEqual(welcome.pointers, [
            PointerEntry(id: "c7", name: "alice", position: PointerPosition(view: .heart, x: 0.25, y: 0.75)),
        ])
    }

    func testAWelcomeWithoutPointersHasNone() {
        let text = #"{"type":"welcome","room":"r","you":{"id":"c1","name":"n"},"epoch":"e","seq":3,"state":\#(state)}"#
        guard case .welcome(let welcome)? = ServerMessage.decode(text)?.0 else { return XCTFail("not a welcome") }
        XCTAssertEqual(welcome.pointers, [])
    }
}
