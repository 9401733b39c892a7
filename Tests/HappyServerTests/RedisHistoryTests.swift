import Foundation
import HappyCore
import HappyRedis
import XCTest

/// The Redis store's history and replay (PROTOCOL.md section 11), driven
/// directly against a redis-server of the test's own.
final class RedisHistoryTests: XCTestCase {
    private var redis: RedisProcess!

    override func setUpWithError() throws {
        redis = try RedisProcess()
    }

    override func tearDown() {
        redis = nil
    }

    private func store(historySize: Int = 5, historyLimit: Int = 100_000, node: String = "n1") throws -> RedisRoomStore {
        let url = try XCTUnwrap(RedisURL(redis.url))
        return try RedisRoomStore(endpoint: FixedRedisEndpoint(url), nodeID: node, historySize: historySize, defaults: .standard,
                                  historyLimit: historyLimit)
    }

    /// Builds a room's commits as a node would: events numbered on from the
    /// stored seq, each carrying the whole scene after it and a label.
    private struct Recorder {
        let room: String
        var epoch: String
        var seq: UInt64
        var scene: Scene
        /// Every event recorded, by seq.
        var events: [UInt64: StoredEvent] = [:]
        var scenes: [UInt64: Scene] = [:]

        init(_ stored: StoredRoom) {
            room = stored.name
            epoch = stored.epoch
            seq = stored.seq
            scene = stored.scene
            scenes[seq] = scene
        }

        /// The next `count` events as one commit; events whose seq is a
        /// multiple of three leave the label as it was ("" before any).
        mutating func commit(_ count: Int) -> RoomCommit {
            let base = seq
            var list: [StoredEvent] = []
            for _ in 0..<count {
                seq += 1
                scene.face.happiness = Int(seq % 101)
                scene.dragon.x = Double(seq) * 10
                let label = seq % 3 == 0 ? events[seq - 1]?.dragonStatus ?? "" : "label after \(seq)"
                var json = Array(#"{"type":"event","room":"\#(room)","seq":\#(seq),"name":"test","state":"#.utf8)
                json += ServerMessageEncoder.sceneJSON(scene)
                json += Array("}".utf8)
                let event = StoredEvent(seq: seq, json: json, dragonStatus: label)
                events[seq] = event
                scenes[seq] = scene
                list.append(event)
            }
            return RoomCommit(room: room, epoch: epoch, baseSeq: base, seq: seq, scene: scene, events: list)
        }
    }

    private func record(_ store: RedisRoomStore, _ recorder: inout Recorder, batches: [Int],
                        file: StaticString = #filePath, line: UInt = #line) throws {
        for count in batches {
            XCTAssertEqual(try store.commit([recorder.commit(count)]), [], "a commit conflicted", file: file, line: line)
        }
    }

    private func found(_ lookup: PastStateLookup, file: StaticString = #filePath, line: UInt = #line) -> PastState? {
        guard case .found(let past) = lookup else {
            XCTFail("expected a state, got \(lookup)", file: file, line: line)
            return nil
        }
        return past
    }

    func testPagesReadEventsBySeqWithTheirLabels() throws {
        let store = try store(historySize: 5)
        defer { store.close() }
        var recorder = Recorder(try XCTUnwrap(try store.loadRoom(named: "pages")))
        try record(store, &recorder, batches: [1, 4, 2, 5])

        var seen: [StoredEvent] = []
        var since: UInt64 = 0
        while true {
            let page = try XCTUnwrap(try store.history(ofRoom: "pages", after: since, limit: 5))
            XCTAssertEqual(page.epoch, recorder.epoch)
            XCTAssertEqual(page.seq, 12)
            XCTAssertEqual(page.first, 1)
            XCTAssertLessThanOrEqual(page.events.count, 5)
            guard let last = page.events.last else { break }
            seen += page.events
            since = last.seq
        }
        XCTAssertEqual(seen, (1...12).map { recorder.events[$0]! }, "pages of 5 give every event once, exactly as stored")
        XCTAssertEqual(seen.filter { $0.seq % 3 == 1 }.map(\.dragonStatus), ["label after 1", "label after 4",
                                                                              "label after 7", "label after 10"])
        XCTAssertEqual(try store.history(ofRoom: "pages", after: 7, limit: 2)?.events.map(\.seq), [8, 9])
        XCTAssertEqual(try store.history(ofRoom: "pages", after: 12, limit: 100)?.events, [])
        XCTAssertEqual(try store.history(ofRoom: "pages", after: 500, limit: 100)?.events, [])
        XCTAssertEqual(try store.history(ofRoom: "pages", after: .max, limit: 100)?.events, [])

        // A resume still gets the newest historySize events only.
        let loaded = try XCTUnwrap(try store.loadRoom(named: "pages"))
        XCTAssertEqual(loaded.seq, 12)
        XCTAssertEqual(loaded.history, (8...12).map { recorder.events[$0]! })
    }

    func testPastStateAtEverySeqAndOutsideTheBounds() throws {
        let store = try store()
        defer { store.close() }
        var recorder = Recorder(try XCTUnwrap(try store.loadRoom(named: "past")))
        try record(store, &recorder, batches: [3, 1, 2])

        let initial = try XCTUnwrap(found(try store.pastState(ofRoom: "past", at: 0)))
        XCTAssertEqual(initial, PastState(epoch: recorder.epoch, seq: 0, scene: .standard, dragonStatus: ""),
                       "the beginning: the defaults and the initial label")
        for seq in UInt64(1)...6 {
            let past = try XCTUnwrap(found(try store.pastState(ofRoom: "past", at: seq)))
            XCTAssertEqual(past, PastState(epoch: recorder.epoch, seq: seq, scene: recorder.scenes[seq]!,
                                           dragonStatus: recorder.events[seq]!.dragonStatus))
        }
        XCTAssertEqual(try store.pastState(ofRoom: "past", at: 7), .beyond(current: 6))
        XCTAssertEqual(try store.pastState(ofRoom: "past", at: .max), .beyond(current: 6))
    }

    func testARoomNeverRecordedHasNoPastAndIsNotCreatedByReading() throws {
        let store = try store()
        defer { store.close() }
        XCTAssertNil(try store.history(ofRoom: "nobody", after: 0, limit: 10))
        XCTAssertEqual(try store.pastState(ofRoom: "nobody", at: 0), .unknownRoom)
        XCTAssertEqual(try redis.cli(["EXISTS", "happy:room:nobody"]), "0")

        // A room just created holds no events: seq 0, first 1.
        let created = try XCTUnwrap(try store.loadRoom(named: "fresh"))
        let page = try XCTUnwrap(try store.history(ofRoom: "fresh", after: 0, limit: 10))
        XCTAssertEqual(page, HistoryPage(epoch: created.epoch, seq: 0, first: 1, events: []))
        XCTAssertEqual(try store.pastState(ofRoom: "fresh", at: 0),
                       .found(PastState(epoch: created.epoch, seq: 0, scene: .standard, dragonStatus: "")))
        XCTAssertEqual(try store.pastState(ofRoom: "fresh", at: 1), .beyond(current: 0))
    }

    func testTrimmingKeepsTheNewestLimitAndMovesTheBaseUp() throws {
        let store = try store(historySize: 2, historyLimit: 4)
        defer { store.close() }
        var recorder = Recorder(try XCTUnwrap(try store.loadRoom(named: "trim")))
        try record(store, &recorder, batches: [3, 1, 4, 2])

        let page = try XCTUnwrap(try store.history(ofRoom: "trim", after: 0, limit: 100))
        XCTAssertEqual(page.first, 7, "the newest 4 of 10 events are held")
        XCTAssertEqual(page.events, (7...10).map { recorder.events[$0]! })
        XCTAssertEqual(try store.history(ofRoom: "trim", after: 8, limit: 100)?.events.map(\.seq), [9, 10])
        XCTAssertEqual(try redis.cli(["XLEN", "happy:events:trim"]), "4")

        let base = try XCTUnwrap(found(try store.pastState(ofRoom: "trim", at: 6)))
        XCTAssertEqual(base, PastState(epoch: recorder.epoch, seq: 6, scene: recorder.scenes[6]!,
                                       dragonStatus: recorder.events[6]!.dragonStatus),
                       "the state before the oldest held event is kept, with its label")
        XCTAssertEqual(try store.pastState(ofRoom: "trim", at: 5), .gone(first: 7))
        XCTAssertEqual(try store.pastState(ofRoom: "trim", at: 0), .gone(first: 7))
        XCTAssertEqual(found(try store.pastState(ofRoom: "trim", at: 8))?.scene, recorder.scenes[8])
        XCTAssertEqual(try store.loadRoom(named: "trim")?.history, (9...10).map { recorder.events[$0]! })

        // Each trim moves the base up with its label.
        try record(store, &recorder, batches: [1])
        XCTAssertEqual(found(try store.pastState(ofRoom: "trim", at: 7))?.dragonStatus, "label after 7")
        XCTAssertEqual(try store.pastState(ofRoom: "trim", at: 6), .gone(first: 8))
    }

    func testAHistoryLimitBelowHistorySizeStillKeepsWhatAResumeNeeds() throws {
        let store = try store(historySize: 4, historyLimit: 2)
        defer { store.close() }
        var recorder = Recorder(try XCTUnwrap(try store.loadRoom(named: "short")))
        try record(store, &recorder, batches: [5, 3])
        XCTAssertEqual(try store.loadRoom(named: "short")?.history, (5...8).map { recorder.events[$0]! })
        // History is the newest 2 all the same, as if only they were kept.
        let page = try XCTUnwrap(try store.history(ofRoom: "short", after: 0, limit: 100))
        XCTAssertEqual(page.first, 7)
        XCTAssertEqual(page.events, [recorder.events[7]!, recorder.events[8]!])
        XCTAssertEqual(try store.history(ofRoom: "short", after: 5, limit: 1)?.events, [recorder.events[7]!])
        XCTAssertEqual(try store.pastState(ofRoom: "short", at: 6),
                       .found(PastState(epoch: recorder.epoch, seq: 6, scene: recorder.scenes[6]!,
                                        dragonStatus: recorder.events[6]!.dragonStatus)))
        XCTAssertEqual(try store.pastState(ofRoom: "short", at: 5), .gone(first: 7))

        // No history at all: only the state after the newest event is answered.
        let none = try self.store(historySize: 4, historyLimit: 0, node: "n2")
        defer { none.close() }
        var other = Recorder(try XCTUnwrap(try none.loadRoom(named: "none")))
        try record(none, &other, batches: [3])
        XCTAssertEqual(try none.history(ofRoom: "none", after: 0, limit: 10),
                       HistoryPage(epoch: other.epoch, seq: 3, first: 4, events: []))
        XCTAssertEqual(found(try none.pastState(ofRoom: "none", at: 3))?.scene, other.scenes[3])
        XCTAssertEqual(try none.pastState(ofRoom: "none", at: 2), .gone(first: 4))
        XCTAssertEqual(try none.loadRoom(named: "none")?.history.count, 3, "a resume still replays")
    }

    func testANewEpochRestartsThePast() throws {
        let store = try store(historySize: 2, historyLimit: 3)
        defer { store.close() }
        var old = Recorder(try XCTUnwrap(try store.loadRoom(named: "again")))
        try record(store, &old, batches: [4, 2])

        // Redis lost the room (flushed, or a fresh server): the next load starts a new epoch.
        try redis.cli(["DEL", "happy:room:again"])
        let reborn = try XCTUnwrap(try store.loadRoom(named: "again"))
        XCTAssertNotEqual(reborn.epoch, old.epoch)
        XCTAssertEqual(reborn.seq, 0)
        XCTAssertEqual(reborn.history, [])
        XCTAssertEqual(try store.history(ofRoom: "again", after: 0, limit: 10),
                       HistoryPage(epoch: reborn.epoch, seq: 0, first: 1, events: []))

        var new = Recorder(reborn)
        try record(store, &new, batches: [2])
        let page = try XCTUnwrap(try store.history(ofRoom: "again", after: 0, limit: 10))
        XCTAssertEqual(page, HistoryPage(epoch: reborn.epoch, seq: 2, first: 1, events: [new.events[1]!, new.events[2]!]),
                       "nothing of the old epoch remains")
        XCTAssertEqual(try store.pastState(ofRoom: "again", at: 0),
                       .found(PastState(epoch: reborn.epoch, seq: 0, scene: .standard, dragonStatus: "")))
        XCTAssertEqual(try store.pastState(ofRoom: "again", at: 3), .beyond(current: 2))

        // A commit that finds the room gone records it anew (its past starting at 0).
        try redis.cli(["DEL", "happy:room:again"])
        var lost = Recorder(StoredRoom(name: "again", epoch: "lost-epoch", seq: 0, scene: .standard, history: []))
        try record(store, &lost, batches: [2])
        XCTAssertEqual(try store.history(ofRoom: "again", after: 0, limit: 10),
                       HistoryPage(epoch: "lost-epoch", seq: 2, first: 1, events: [lost.events[1]!, lost.events[2]!]))
        XCTAssertEqual(found(try store.pastState(ofRoom: "again", at: 0))?.scene, .standard)
    }

    func testAStaleCommitLeavesTheHistoryAlone() throws {
        let store = try store()
        defer { store.close() }
        var recorder = Recorder(try XCTUnwrap(try store.loadRoom(named: "stale")))
        var stale = recorder
        try record(store, &recorder, batches: [2])
        let conflicts = try store.commit([stale.commit(3)])
        XCTAssertEqual(conflicts.map(\.room), ["stale"])
        XCTAssertEqual(try store.history(ofRoom: "stale", after: 0, limit: 10)?.events, [recorder.events[1]!, recorder.events[2]!])
    }

    /// Rooms recorded before the base was kept: no `first`, events without labels.
    func testARoomRecordedBeforeTheBaseWasKeptStartsAtItsOldestEvent() throws {
        let store = try store(historySize: 2, historyLimit: 3)
        defer { store.close() }
        var recorder = Recorder(StoredRoom(name: "old", epoch: "old-epoch", seq: 2, scene: .standard, history: []))
        let commit = recorder.commit(3)
        try redis.cli(["HSET", "happy:room:old", "epoch", "old-epoch", "seq", "5",
                       "scene", String(decoding: ServerMessageEncoder.sceneJSON(commit.scene), as: UTF8.self)])
        for event in commit.events {
            try redis.cli(["XADD", "happy:events:old", "\(event.seq)-1", "e", String(decoding: event.json, as: UTF8.self)])
        }
        let page = try XCTUnwrap(try store.history(ofRoom: "old", after: 0, limit: 10))
        XCTAssertEqual(page.first, 4, "the oldest stored event stands as the base")
        XCTAssertEqual(page.events.map(\.seq), [4, 5])
        XCTAssertEqual(page.events.map(\.dragonStatus), ["", ""])
        XCTAssertEqual(try store.pastState(ofRoom: "old", at: 3),
                       .found(PastState(epoch: "old-epoch", seq: 3, scene: recorder.scenes[3]!, dragonStatus: "")))
        XCTAssertEqual(try store.pastState(ofRoom: "old", at: 2), .gone(first: 4))

        // The next commit trims (4 events, 3 kept) and writes a real base.
        try record(store, &recorder, batches: [1])
        let after = try XCTUnwrap(try store.history(ofRoom: "old", after: 0, limit: 10))
        XCTAssertEqual(after.first, 4)
        XCTAssertEqual(after.events.map(\.seq), [4, 5, 6])
        XCTAssertEqual(after.events.last?.dragonStatus, recorder.events[6]?.dragonStatus)
        XCTAssertEqual(found(try store.pastState(ofRoom: "old", at: 3))?.scene, recorder.scenes[3])
    }

    func testReadsCarryOnAfterRedisRestarts() throws {
        let store = try store()
        defer { store.close() }
        var recorder = Recorder(try XCTUnwrap(try store.loadRoom(named: "restart")))
        try record(store, &recorder, batches: [3])
        XCTAssertEqual(try store.history(ofRoom: "restart", after: 0, limit: 10)?.events.count, 3)

        // The data is on disk; the read connection and the loaded scripts are gone.
        redis.stop()
        try redis.start()
        XCTAssertEqual(try store.history(ofRoom: "restart", after: 0, limit: 10)?.events, (1...3).map { recorder.events[$0]! })
        XCTAssertEqual(found(try store.pastState(ofRoom: "restart", at: 2))?.scene, recorder.scenes[2])
        try record(store, &recorder, batches: [1])
        XCTAssertEqual(try store.history(ofRoom: "restart", after: 3, limit: 10)?.events, [recorder.events[4]!])
    }

    /// Reads come from another thread while commits run: each page is one
    /// consistent view (contiguous, within its own bounds).
    func testReadsFromAnotherThreadDuringCommitsSeeConsistentPages() throws {
        let store = try store(historySize: 5, historyLimit: 50)
        defer { store.close() }
        var recorder = Recorder(try XCTUnwrap(try store.loadRoom(named: "busy")))
        let finished = DispatchSemaphore(value: 0)
        let problems = ProblemLog()
        let reader = Thread {
            while !problems.stopped {
                do {
                    guard let page = try store.history(ofRoom: "busy", after: 0, limit: 1000) else { continue }
                    let seqs = page.events.map(\.seq)
                    if let oldest = seqs.first,
                       oldest != page.first || seqs != Array(oldest..<oldest + UInt64(seqs.count)) || seqs.last != page.seq {
                        problems.add("inconsistent page: first \(page.first), seq \(page.seq), events \(seqs)")
                    }
                    if page.seq > 0, case .found(let past) = try store.pastState(ofRoom: "busy", at: page.seq),
                       MemoryRoomStore.scene(in: page.events.last?.json ?? []) != past.scene {
                        problems.add("the state at \(page.seq) differs from its event")
                    }
                    problems.countRead()
                } catch {
                    problems.add("read failed: \(error)")
                }
            }
            finished.signal()
        }
        reader.start()
        for round in 0..<150 { try record(store, &recorder, batches: [1 + round % 3]) }
        problems.stop()
        XCTAssertEqual(finished.wait(timeout: .now() + 10), .success, "the reader did not stop")
        XCTAssertEqual(problems.messages, [])
        XCTAssertGreaterThan(problems.reads, 0, "the reader never read")
        XCTAssertEqual(try store.history(ofRoom: "busy", after: 0, limit: 1000)?.events.count, 50)
    }

    /// What the reader thread saw, and when it should stop.
    private final class ProblemLog: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [String] = []
        private var readCount = 0
        private var stopRequested = false

        private func locked<T>(_ body: () -> T) -> T {
            lock.lock()
            defer { lock.unlock() }
            return body()
        }

        func add(_ message: String) { locked { if list.count < 10 { list.append(message) } } }
        func countRead() { locked { readCount += 1 } }
        func stop() { locked { stopRequested = true } }
        var stopped: Bool { locked { stopRequested } }
        var messages: [String] { locked { list } }
        var reads: Int { locked { readCount } }
    }
}
