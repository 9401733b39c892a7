import HappyCore
@testable import HappyServer
import XCTest

/// A connection's write state as a value: the close handshake's steps, reading
/// paused and resumed, the keepalive ping.
final class WriteStateTests: XCTestCase {
    private let kick = WriteState.CloseRequest(code: .kicked, reason: "kicked")
    private let shutdown = WriteState.CloseRequest(code: .goingAway, reason: "shutdown", afterDrain: true)

    func testTheServersCloseGoesFromRequestedToItsFrameThenThePeersAnswer() {
        var state = WriteState(outboxLimit: 1024, now: 0)
        XCTAssertEqual(state.closing, .open)
        XCTAssertNil(state.closeRequest)

        XCTAssertTrue(state.requestClose(kick))
        XCTAssertEqual(state.closing, .requested(kick))
        XCTAssertFalse(state.requestClose(shutdown), "the first close decided stays")
        XCTAssertEqual(state.closeRequest, kick)
        XCTAssertFalse(state.closeFrameSent)

        state.closeFrameWritten()
        XCTAssertEqual(state.closing, .closeFrameWritten(kick))
        XCTAssertTrue(state.closeFrameSent)
        XCTAssertEqual(state.closeRequest, kick, "what was sent stays readable")
        XCTAssertFalse(state.requestClose(shutdown))

        XCTAssertTrue(state.peerClosing(), "the peer's close frame answers the server's")
        XCTAssertEqual(state.closing, .closeFrameWritten(kick))
    }

    func testThePeersCloseFirstLeavesRoomForTheServersOwn() {
        var state = WriteState(outboxLimit: 1024, now: 0)
        XCTAssertFalse(state.peerClosing(), "nothing of the server's to answer")
        XCTAssertEqual(state.closing, .peerClosing)
        XCTAssertFalse(state.peerClosing())
        XCTAssertNil(state.closeRequest)

        XCTAssertTrue(state.requestClose(shutdown))
        XCTAssertEqual(state.closing, .requested(shutdown))
        XCTAssertFalse(state.peerClosing(), "no close frame of the server's is out yet")
        XCTAssertEqual(state.closing, .requested(shutdown))

        state.closeFrameWritten()
        XCTAssertTrue(state.peerClosing())
    }

    func testAClosePutsTheNextWritableCallbackBackOnItsWay() {
        var state = WriteState(outboxLimit: 1024, now: 0)
        XCTAssertTrue(state.requestWritable(now: 1))
        XCTAssertFalse(state.requestWritable(now: 2), "one callback at a time")
        XCTAssertTrue(state.requestClose(kick))
        XCTAssertFalse(state.writableRequested)
        XCTAssertTrue(state.requestWritable(now: 3))
        XCTAssertEqual(state.stalledSince, 3)
    }

    func testReadingPausesOnceAndRemembersItWasPaused() {
        var state = WriteState(outboxLimit: 1024, now: 0)
        XCTAssertEqual(state.reading, .flowing)
        XCTAssertFalse(state.hasPausedReading)
        XCTAssertFalse(state.resumeReading(), "nothing to resume")

        XCTAssertTrue(state.pauseReading())
        XCTAssertFalse(state.pauseReading(), "paused already")
        XCTAssertTrue(state.readingPaused)
        XCTAssertTrue(state.hasPausedReading)

        XCTAssertTrue(state.resumeReading())
        XCTAssertEqual(state.reading, .resumed)
        XCTAssertFalse(state.readingPaused)
        XCTAssertTrue(state.hasPausedReading, "only the first pause is logged")
        XCTAssertFalse(state.resumeReading())
    }

    func testAPingIsTakenOnce() {
        var state = WriteState(outboxLimit: 1024, now: 0)
        XCTAssertFalse(state.takePing())
        state.pingRequested()
        XCTAssertTrue(state.pingDue)
        XCTAssertTrue(state.takePing())
        XCTAssertFalse(state.pingDue)
        XCTAssertFalse(state.takePing())
    }
}
