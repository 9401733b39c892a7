import HappyCore
import XCTest

/// What one node publishes to the others about a room's new events.
final class RemoteEventsCodecTests: XCTestCase {
    private func message(seq: String, events: [String]) -> [UInt8] {
        let scene = String(decoding: ServerMessageEncoder.sceneJSON(.standard), as: UTF8.self)
        return Array((["node-a", "lobby", "epoch-1", seq, scene] + events).joined(separator: "\n").utf8)
    }

    func testEventsAreNumberedUpToTheLastSeq() throws {
        let read = try XCTUnwrap(RemoteEventsCodec.decode(message(seq: "12", events: ["{}", "{}", "{}"])))
        XCTAssertEqual(read.events.map(\.seq), [10, 11, 12])
        XCTAssertEqual(RemoteEventsCodec.decode(RemoteEventsCodec.encode(read)), read)
    }

    /// A malformed message from another node is dropped, never a trap.
    func testSeqsThatCannotBeNumberedAreRefused() {
        XCTAssertNil(RemoteEventsCodec.decode(message(seq: "\(UInt64.max)", events: [])))
        XCTAssertNil(RemoteEventsCodec.decode(message(seq: "\(UInt64.max)", events: ["{}"])))
        XCTAssertNil(RemoteEventsCodec.decode(message(seq: "1", events: ["{}", "{}"])))
        XCTAssertNil(RemoteEventsCodec.decode(message(seq: "-1", events: [])))
    }
}
