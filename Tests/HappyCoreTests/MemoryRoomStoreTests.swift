@testable import HappyCore
import XCTest

/// The in-memory store's past, with history kept and without.
final class MemoryRoomStoreTests: XCTestCase {
    private func scene(happiness: Int) -> Scene {
        var scene = Scene.standard
        scene.face.happiness = happiness
        return scene
    }

    private func event(_ seq: UInt64) -> StoredEvent {
        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        writer.key("seq"); writer.int(Int(seq))
        writer.key("state"); writer.raw(ServerMessageEncoder.sceneJSON(scene(happiness: Int(seq))))
        writer.endObject()
        return StoredEvent(seq: seq, json: writer.bytes, dragonStatus: "label \(seq)")
    }

    /// Commits seq 1...10 one by one, each with its event or (history off) without.
    private func store(historyLimit: Int, withEvents: Bool) throws -> MemoryRoomStore {
        let store = MemoryRoomStore(historySize: 8, historyLimit: historyLimit)
        try store.commit([RoomCommit(room: "r", epoch: "e", baseSeq: 0, seq: 0, scene: .standard, events: [])])
        for seq in UInt64(1)...10 {
            try store.commit([RoomCommit(room: "r", epoch: "e", baseSeq: seq - 1, seq: seq, scene: scene(happiness: Int(seq)),
                                         events: withEvents ? [event(seq)] : [])])
        }
        return store
    }

    func testWithHistoryTheHeldPastIsPagedAndRead() throws {
        let store = try store(historyLimit: 4, withEvents: true)
        let page = try XCTUnwrap(store.history(ofRoom: "r", after: 0, limit: 100))
        XCTAssertEqual(page.first, 7)
        XCTAssertEqual(page.events.map(\.seq), [7, 8, 9, 10])
        XCTAssertEqual(try store.pastState(ofRoom: "r", at: 3), .gone(first: 7))
        guard case .found(let past) = try store.pastState(ofRoom: "r", at: 8) else { return XCTFail("seq 8 is held") }
        XCTAssertEqual(past.scene.face.happiness, 8)
        XCTAssertEqual(past.dragonStatus, "label 8")
    }

    /// History off (no events in the commits): asking for the past is
    /// answered, not a trap on an index the store never held.
    func testWithoutHistoryThePastIsGoneNotATrap() throws {
        for limit in [0, 4] {
            let store = try store(historyLimit: limit, withEvents: false)
            let page = try XCTUnwrap(store.history(ofRoom: "r", after: 3, limit: 100))
            XCTAssertEqual(page.events, [], "limit \(limit)")
            XCTAssertEqual(page.seq, 10)
            XCTAssertEqual(page.first, 11)
            for seq: UInt64 in [0, 3, 9, 10] {
                XCTAssertEqual(try store.pastState(ofRoom: "r", at: seq), .gone(first: 11), "limit \(limit), seq \(seq)")
            }
            XCTAssertEqual(try store.pastState(ofRoom: "r", at: 11), .beyond(current: 10))
            XCTAssertEqual(try store.loadRoom(named: "r")?.seq, 10)
        }
    }
}
