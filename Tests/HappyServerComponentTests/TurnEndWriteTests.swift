import HappyCore
@testable import HappyServer
import XCTest

/// Messages queued during an event-loop turn are written when it ends to
/// every client whose transport holds nothing back, coalesced per client,
/// without a writable callback; the others wait for theirs.
final class TurnEndWriteTests: XCTestCase {
    func testIdleClientIsWrittenOnceWhenTheTurnEnds() {
        let test = TestServer()
        let reader = test.joined()
        let writer = test.joined()
        _ = test.messages(of: reader)  // the writer's presence
        let requestsBefore = reader.transport.writableRequests
        let writesBefore = reader.transport.writes.count

        test.server.broadcaster.writingAfter {
            for value in [60, 70] { test.sendIntent(writer, "face.setHappiness", #""value":\#(value)"#) }
            XCTAssertEqual(reader.transport.writes.count, writesBefore, "nothing is written during the turn")
        }

        XCTAssertEqual(reader.transport.writableRequests, requestsBefore, "no writable callback asked for")
        XCTAssertEqual(reader.transport.writes.count, writesBefore + 1, "both events in one write")
        XCTAssertEqual(reader.transport.writes.last?.frames.compactMap { $0.json?["seq"]?.intValue }, [1, 2])
        XCTAssertTrue(test.server.broadcaster.isCaughtUp(reader.connection))
        XCTAssertEqual(test.types(of: writer).filter { $0 == "event" }.count, 2)
    }

    func testClientWithBufferedOutputWaitsForItsWritableCallback() {
        let test = TestServer()
        let reader = test.joined()
        let writer = test.joined()
        _ = test.messages(of: reader)
        let writesBefore = reader.transport.writes.count
        reader.transport.bufferedOutput = true

        test.server.broadcaster.writingAfter {
            test.sendIntent(writer, "face.setHappiness", #""value":60"#)
        }

        XCTAssertEqual(reader.transport.writes.count, writesBefore, "the transport still holds bytes")
        XCTAssertTrue(reader.transport.writablePending)
        reader.transport.bufferedOutput = false
        XCTAssertEqual(test.messages(of: reader).map { $0["seq"]?.intValue }, [1])
    }

    func testClientWithACloseDueIsLeftToItsWritableCallback() {
        let test = TestServer()
        let client = test.joined()
        let writesBefore = client.transport.writes.count

        test.server.broadcaster.writingAfter {
            test.sendIntent(client, "face.setHappiness", #""value":60"#)
            test.server.broadcaster.close(client.connection, code: .goingAway, reason: "bye", afterDrain: true)
        }

        XCTAssertEqual(client.transport.writes.count, writesBefore, "a close is written in the callback only")
        test.pump(client)
        XCTAssertEqual(client.transport.closeFrame?.closeCode, 1001)
    }

    func testClientWhosePeerIsClosingIsLeftToItsWritableCallback() {
        let test = TestServer()
        let reader = test.joined()
        let writer = test.joined()
        _ = test.messages(of: reader)
        let writesBefore = reader.transport.writes.count
        XCTAssertFalse(test.server.broadcaster.peerClosing(reader.connection))

        test.server.broadcaster.writingAfter {
            test.sendIntent(writer, "face.setHappiness", #""value":60"#)
        }

        XCTAssertEqual(reader.transport.writes.count, writesBefore, "lws answers the peer's close: no write of ours")
        XCTAssertTrue(reader.transport.writablePending)
    }
}
