@testable import HappyClientKit
import HappyCore
import XCTest

/// Live pointers in the session (PROTOCOL.md section 10): the others'
/// pointers kept from welcomes, batches, leaves and drops; this client's
/// own paced, latest first, and encoded as the server reads them.
final class PointerSessionTests: XCTestCase {
    private func entry(_ id: String, _ name: String, _ view: PointerView = .face, x: Double = 0.5, y: Double = 0.5,
                       _ activity: PointerActivity = .idle) -> PointerEntry {
        PointerEntry(id: id, name: name, position: PointerPosition(view: view, x: x, y: y, activity: activity))
    }

    private func welcome(pointers: [PointerEntry]) -> WelcomeMessage {
        let list = pointers.map { String(decoding: ServerMessageEncoder.pointerEntry($0), as: UTF8.self) }
        let text = """
            {"type":"welcome","room":"lobby","you":{"id":"c1","name":"me"},"epoch":"e1","seq":0,\
            "state":\(SessionFixtures.state()),"presence":[],"presenceCount":1,"pointers":[\(list.joined(separator: ","))]}
            """
        guard case .welcome(let welcome)? = ServerMessage.decode(text)?.0 else { fatalError("bad welcome") }
        return welcome
    }

    // MARK: the others' pointers

    func testTheWelcomeListsThePointersShownAtJoin() {
        var board = PointerBoard()
        let alice = entry("c7", "alice", .heart, .drag)
        let update = board.welcome(welcome(pointers: [alice]))
        XCTAssertEqual(board.pointers, ["c7": alice])
        XCTAssertEqual(update.cause, .welcome)
        XCTAssertEqual(update.moved, [alice])
        XCTAssertTrue(board.welcome(welcome(pointers: [])).removed == [alice], "a later welcome replaces the list")
        XCTAssertEqual(board.pointers, [:])
        XCTAssertTrue(board.welcome(welcome(pointers: [])).isEmpty)
    }

    func testBatchesMoveAndRemovePointers() {
        var board = PointerBoard()
        _ = board.welcome(welcome(pointers: [entry("c7", "alice")]))
        let bob = entry("c8", "bob", .dragon, x: 0.9, y: 0.2, .press)
        let moved = entry("c7", "alice", .face, x: 0.1, y: 0.2, .drag)
        let first = board.batch(PointersMessage(room: "lobby", pointers: [moved, bob], gone: []), you: "c1")
        XCTAssertEqual(first.moved, [moved, bob])
        XCTAssertEqual(board.pointers, ["c7": moved, "c8": bob])
        let second = board.batch(PointersMessage(room: "lobby", pointers: [], gone: ["c7", "c99"]), you: "c1")
        XCTAssertEqual(second.gone, ["c7", "c99"], "as the server listed them")
        XCTAssertEqual(second.removed, [moved], "only what was shown")
        XCTAssertEqual(second.pointers, ["c8": bob])
    }

    func testThisClientsOwnPointerIsNeverShown() {
        var board = PointerBoard()
        _ = board.welcome(welcome(pointers: [entry("c1", "me"), entry("c2", "bob")]))
        XCTAssertEqual(Array(board.pointers.keys), ["c2"], "the welcome's you.id")
        let update = board.batch(PointersMessage(room: "lobby", pointers: [entry("c1", "me")], gone: []), you: "c1")
        XCTAssertEqual(update.moved, [])
        XCTAssertEqual(Array(board.pointers.keys), ["c2"])
    }

    func testALeaveOrADropRemovesPointers() {
        var board = PointerBoard()
        _ = board.welcome(welcome(pointers: [entry("c7", "alice"), entry("c8", "bob")]))
        XCTAssertNil(board.left(Participant(id: "c9", name: "carol")), "no pointer, no change")
        let left = board.left(Participant(id: "c7", name: "alice"))
        XCTAssertEqual(left?.cause, .left)
        XCTAssertEqual(left?.removed.map(\.id), ["c7"])
        XCTAssertEqual(Array(board.pointers.keys), ["c8"])
        let dropped = board.disconnected()
        XCTAssertEqual(dropped?.cause, .disconnected)
        XCTAssertEqual(dropped?.gone, ["c8"])
        XCTAssertEqual(board.pointers, [:])
        XCTAssertNil(board.disconnected())
    }

    // MARK: this client's pointer

    private let face = PointerPosition(view: .face, x: 0.5, y: 0.5, activity: .drag)
    private let heart = PointerPosition(view: .heart, x: 0.2, y: 0.8, activity: .drag)
    private let dragon = PointerPosition(view: .dragon, x: 0.9, y: 0.5, activity: .press)

    func testTheFirstPositionGoesAtOnceAndTheLatestWinsWithinTheInterval() {
        var throttle = PointerThrottle(interval: 0.05)
        XCTAssertEqual(throttle.offer(face, now: 10), .send(face))
        XCTAssertEqual(throttle.offer(heart, now: 10.01), .wake(at: 10.05), "one wake-up at the end of the interval")
        XCTAssertEqual(throttle.offer(dragon, now: 10.02), .nothing, "already waiting")
        XCTAssertEqual(throttle.due(now: 10.05), .send(dragon), "the latest wins")
        XCTAssertEqual(throttle.due(now: 10.2), .nothing, "nothing left")
        XCTAssertEqual(throttle.offer(face, now: 10.2), .send(face), "a quiet interval later: at once")
    }

    func testAHideIsPacedLikeAMoveAndNothingIsSentTwice() {
        var throttle = PointerThrottle(interval: 0.05)
        XCTAssertEqual(throttle.offer(nil, now: 1), .nothing, "nothing shown, nothing to hide")
        XCTAssertEqual(throttle.offer(face, now: 1), .send(face))
        XCTAssertEqual(throttle.offer(face, now: 2), .nothing, "the server shows it already")
        XCTAssertEqual(throttle.offer(nil, now: 2), .send(nil))
        XCTAssertEqual(throttle.offer(face, now: 2.01), .wake(at: 2.05))
        XCTAssertEqual(throttle.offer(nil, now: 2.02), .nothing, "back to what the server shows")
        XCTAssertEqual(throttle.due(now: 2.05), .nothing)
        XCTAssertNil(throttle.shown)
    }

    func testANewConnectionShowsTheLatestPositionAgain() {
        var throttle = PointerThrottle(interval: 0.05)
        XCTAssertEqual(throttle.offer(face, now: 1), .send(face))
        XCTAssertEqual(throttle.connected(now: 5), .send(face), "the new connection's server shows nothing yet")
        throttle.hold(heart)
        XCTAssertEqual(throttle.connected(now: 9), .send(heart), "what was asked while disconnected")
        throttle.hold(nil)
        XCTAssertEqual(throttle.connected(now: 20), .nothing, "hidden while disconnected: nothing to show")
    }

    func testPointersAreEncodedAsTheServerReadsThem() {
        for position in [face, heart, dragon, PointerPosition(view: .face, x: 0, y: 1)] {
            XCTAssertEqual(try? ClientMessageDecoder.decode(IntentEncoder.pointer(position)).get(), .pointer(position))
        }
        XCTAssertEqual(IntentEncoder.pointer(nil), #"{"type":"pointer","view":null}"#)
        XCTAssertEqual(try? ClientMessageDecoder.decode(IntentEncoder.pointer(nil)).get(), .pointer(nil))
        let wild = PointerPosition(view: .heart, x: 1.5, y: 0.123456789, activity: .pinch)
        XCTAssertEqual(IntentEncoder.pointer(wild),
                       #"{"type":"pointer","view":"heart","x":1,"y":0.1235,"activity":"pinch"}"#, "kept in the view, short")
    }

    func testASessionThatIsNotConnectedKeepsThePointerForLater() throws {
        let loop = try ClientLoop(name: "pointer-test")
        defer { loop.shutdown() }
        let session = HappySession(configuration: SessionConfiguration(server: WebSocketURL("ws://127.0.0.1:9")!), loop: loop)
        session.sendPointer(face)
        XCTAssertEqual(session.pointerThrottle.pending, .some(face), "held, not sent")
        XCTAssertEqual(session.pointers, [:])
        XCTAssertEqual(session.snapshot.pointers, [:])
    }
}
