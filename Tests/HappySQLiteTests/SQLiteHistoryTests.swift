import Foundation
import HappyCore
import HappySQLite
import XCTest

/// Events as the server records them: the broadcast JSON (with the whole
/// scene after the event in `state`) and the dragon label after each.
enum HistoryFixture {
    /// The scene after event `seq`: its happiness tells which event it was.
    static func scene(after seq: UInt64) -> Scene {
        var scene = Scene.standard
        scene.face.happiness = Int(seq % 101)
        return scene
    }

    static func label(after seq: UInt64) -> String { "forward, (x,y) = (\(seq), 10)" }

    static func event(_ seq: UInt64, room: String = "lobby") -> StoredEvent {
        let change = SceneChange(path: .faceHappiness, from: .integer(Int((seq - 1) % 101)), to: .integer(Int(seq % 101)))
        let event = RoomEvent(seq: seq, time: 1_764_460_000_000 + Int64(seq), room: room, name: .didChangeHappiness,
                              sender: Participant(id: "c7", name: "alice"), changes: [change],
                              state: scene(after: seq))
        return StoredEvent(seq: seq, json: ServerMessageEncoder.event(event), dragonStatus: label(after: seq))
    }

    /// The commit of events `from...to` (none when `to` < `from`).
    static func commit(_ room: String = "lobby", epoch: String = "e1", from: UInt64, to: UInt64) -> RoomCommit {
        RoomCommit(room: room, epoch: epoch, baseSeq: from - 1, seq: to, scene: scene(after: to),
                   events: from <= to ? (from...to).map { event($0, room: room) } : [])
    }

    /// A new room, as the server records it before its first event.
    static func creation(_ room: String = "lobby", epoch: String = "e1") -> RoomCommit {
        RoomCommit(room: room, epoch: epoch, baseSeq: 0, seq: 0, scene: .standard, events: [])
    }

    static func temporaryDirectory(_ prefix: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString.prefix(8))").path
    }

    /// Runs SQL on a closed store's database with the sqlite3 shell; its output, trimmed.
    @discardableResult
    static func sqlite(_ directory: String, _ sql: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [(directory as NSString).appendingPathComponent(SQLiteRoomStore.fileName), sql]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CocoaError(.fileReadUnknown) }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

final class SQLiteHistoryTests: XCTestCase {
    private var directory = ""

    override func setUp() {
        directory = HistoryFixture.temporaryDirectory("happy-history")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func open(historyLimit: Int = 100_000, historySize: Int = 10) throws -> SQLiteRoomStore {
        try SQLiteRoomStore(directory: directory, historySize: historySize, historyLimit: historyLimit, fsync: false)
    }

    /// Commits events 1...`through` of "lobby" (after its creation), `perCommit` at a time.
    private func record(_ store: SQLiteRoomStore, through last: UInt64, perCommit: UInt64 = 5) throws {
        try store.commit([HistoryFixture.creation()])
        for start in stride(from: 1, through: last, by: Int(perCommit)) {
            try store.commit([HistoryFixture.commit(from: UInt64(start), to: min(last, UInt64(start) + perCommit - 1))])
        }
    }

    private func found(_ lookup: PastStateLookup, file: StaticString = #filePath, line: UInt = #line) -> PastState? {
        guard case .found(let state) = lookup else {
            XCTFail("expected a state, got \(lookup)", file: file, line: line)
            return nil
        }
        return state
    }

    func testAnUnknownRoomHasNoHistory() throws {
        let store = try open()
        defer { store.close() }
        XCTAssertNil(try store.history(ofRoom: "nowhere", after: 0, limit: 10))
        XCTAssertEqual(try store.pastState(ofRoom: "nowhere", at: 0), .unknownRoom)
    }

    func testANewRoomHasSeqZeroFirstOneAndItsInitialState() throws {
        let store = try open()
        defer { store.close() }
        try store.commit([HistoryFixture.creation()])
        XCTAssertEqual(try store.history(ofRoom: "lobby", after: 0, limit: 10),
                       HistoryPage(epoch: "e1", seq: 0, first: 1, events: []))
        XCTAssertEqual(try store.pastState(ofRoom: "lobby", at: 0),
                       .found(PastState(epoch: "e1", seq: 0, scene: .standard, dragonStatus: "")))
        XCTAssertEqual(try store.pastState(ofRoom: "lobby", at: 1), .beyond(current: 0))
    }

    func testHistoryPagesThroughTheEventsInOrderWithTheirLabels() throws {
        let store = try open()
        defer { store.close() }
        try record(store, through: 25)
        var seen: [StoredEvent] = []
        var since: UInt64 = 0
        while true {
            let page = try XCTUnwrap(try store.history(ofRoom: "lobby", after: since, limit: 10))
            XCTAssertEqual(page.epoch, "e1")
            XCTAssertEqual(page.seq, 25)
            XCTAssertEqual(page.first, 1)
            XCTAssertLessThanOrEqual(page.events.count, 10)
            guard let last = page.events.last else { break }
            seen += page.events
            since = last.seq
        }
        XCTAssertEqual(seen, (1...25).map { HistoryFixture.event($0) }, "the exact JSON and the label of every event")
        XCTAssertEqual(try store.history(ofRoom: "lobby", after: 20, limit: 1000)?.events.map(\.seq), [21, 22, 23, 24, 25])
        XCTAssertEqual(try store.history(ofRoom: "lobby", after: 25, limit: 10)?.events, [])
        XCTAssertEqual(try store.history(ofRoom: "lobby", after: 99, limit: 10)?.events, [], "beyond the room's seq")
        XCTAssertEqual(try store.history(ofRoom: "lobby", after: .max, limit: 10)?.events, [])
        XCTAssertEqual(try store.pastState(ofRoom: "lobby", at: .max), .beyond(current: 25))
        XCTAssertEqual(try store.history(ofRoom: "lobby", after: 3, limit: 0)?.events, [])
    }

    func testPastStateIsTheStateAndLabelRightAfterTheEvent() throws {
        let store = try open()
        defer { store.close() }
        try record(store, through: 25)
        for seq: UInt64 in [1, 7, 24, 25] {
            XCTAssertEqual(try store.pastState(ofRoom: "lobby", at: seq),
                           .found(PastState(epoch: "e1", seq: seq, scene: HistoryFixture.scene(after: seq),
                                            dragonStatus: HistoryFixture.label(after: seq))))
        }
        XCTAssertEqual(try store.pastState(ofRoom: "lobby", at: 0),
                       .found(PastState(epoch: "e1", seq: 0, scene: .standard, dragonStatus: "")))
        XCTAssertEqual(try store.pastState(ofRoom: "lobby", at: 26), .beyond(current: 25))
    }

    func testBoundsOnceOldEventsArePruned() throws {
        let store = try open(historyLimit: 10)
        defer { store.close() }
        try record(store, through: 30, perCommit: 3)
        let page = try XCTUnwrap(try store.history(ofRoom: "lobby", after: 0, limit: 100))
        XCTAssertEqual(page.first, 21)
        XCTAssertEqual(page.events.map(\.seq), Array(21...30), "a since older than first answers from first on")
        XCTAssertEqual(try store.history(ofRoom: "lobby", after: 20, limit: 100)?.events.count, 10)
        XCTAssertEqual(try store.history(ofRoom: "lobby", after: 25, limit: 2)?.events.map(\.seq), [26, 27])
        XCTAssertEqual(try store.pastState(ofRoom: "lobby", at: 19), .gone(first: 21))
        XCTAssertEqual(try store.pastState(ofRoom: "lobby", at: 0), .gone(first: 21))
        XCTAssertEqual(try store.pastState(ofRoom: "lobby", at: 31), .beyond(current: 30))
        // first - 1 is the base: the state and label after the newest pruned event.
        XCTAssertEqual(try store.pastState(ofRoom: "lobby", at: 20),
                       .found(PastState(epoch: "e1", seq: 20, scene: HistoryFixture.scene(after: 20),
                                        dragonStatus: HistoryFixture.label(after: 20))))
        XCTAssertEqual(found(try store.pastState(ofRoom: "lobby", at: 21))?.scene, HistoryFixture.scene(after: 21))
    }

    func testPruningKeepsExactlyTheLimitAndMovesTheBase() throws {
        let store = try open(historyLimit: 10, historySize: 4)
        try record(store, through: 97, perCommit: 3)
        XCTAssertEqual(try store.history(ofRoom: "lobby", after: 0, limit: 1000)?.events.map(\.seq), Array(88...97))
        XCTAssertEqual(found(try store.pastState(ofRoom: "lobby", at: 87))?.dragonStatus, HistoryFixture.label(after: 87))
        XCTAssertEqual(try store.loadRoom(named: "lobby")?.history.map(\.seq), [94, 95, 96, 97],
                       "a resume still gets historySize events")
        // A commit larger than the limit: the base is one of its own events.
        try store.commit([HistoryFixture.commit(from: 98, to: 130)])
        XCTAssertEqual(try store.history(ofRoom: "lobby", after: 0, limit: 1000)?.events.map(\.seq), Array(121...130))
        XCTAssertEqual(found(try store.pastState(ofRoom: "lobby", at: 120))?.scene, HistoryFixture.scene(after: 120))
        store.close()
        XCTAssertEqual(try HistoryFixture.sqlite(directory, "SELECT count(*) FROM events"), "11",
                       "pruned events are deleted, not only skipped: the limit and the base are left")
        XCTAssertEqual(try HistoryFixture.sqlite(directory, "SELECT min(seq), max(seq) FROM events"), "120|130")
    }

    func testALowerLimitAtTheNextStartDropsTheExcessAFewHundredRowsPerCommit() throws {
        var store = try open(historyLimit: 1000)
        try record(store, through: 1000, perCommit: 10)
        store.close()
        XCTAssertEqual(try HistoryFixture.sqlite(directory, "SELECT count(*) FROM events"), "1000")

        store = try open(historyLimit: 10, historySize: 2)
        try store.commit([HistoryFixture.commit(from: 1001, to: 1001)])
        XCTAssertEqual(try store.history(ofRoom: "lobby", after: 0, limit: 1000)?.events.map(\.seq), Array(992...1001),
                       "the history is cut at once")
        XCTAssertEqual(found(try store.pastState(ofRoom: "lobby", at: 991))?.scene, HistoryFixture.scene(after: 991))
        XCTAssertEqual(try store.pastState(ofRoom: "lobby", at: 990), .gone(first: 992))
        store.close()
        XCTAssertEqual(try HistoryFixture.sqlite(directory, "SELECT count(*) FROM events"), "\(1000 - 256)",
                       "one commit deletes at most 256 of the excess rows")

        store = try open(historyLimit: 10, historySize: 2)
        for seq: UInt64 in 1002...1005 { try store.commit([HistoryFixture.commit(from: seq, to: seq)]) }
        XCTAssertEqual(try store.history(ofRoom: "lobby", after: 0, limit: 1000)?.events.map(\.seq), Array(996...1005))
        store.close()
        XCTAssertEqual(try HistoryFixture.sqlite(directory, "SELECT min(seq), count(*) FROM events"), "995|11")
    }

    func testEachRoomKeepsItsOwnLimit() throws {
        let store = try open(historyLimit: 10)
        defer { store.close() }
        try store.commit([HistoryFixture.creation("quiet"), HistoryFixture.creation("busy")])
        for (index, start) in stride(from: 1 as UInt64, through: 50, by: 5).enumerated() {
            var commits = [HistoryFixture.commit("busy", from: start, to: start + 4)]
            if index < 2 { commits.append(HistoryFixture.commit("quiet", from: UInt64(index) + 1, to: UInt64(index) + 1)) }
            try store.commit(commits)
        }
        XCTAssertEqual(try store.history(ofRoom: "busy", after: 0, limit: 100)?.first, 41)
        XCTAssertEqual(try store.history(ofRoom: "quiet", after: 0, limit: 100)?.events.map(\.seq), [1, 2])
        XCTAssertEqual(try store.pastState(ofRoom: "quiet", at: 0),
                       .found(PastState(epoch: "e1", seq: 0, scene: .standard, dragonStatus: "")))
    }

    func testANewEpochRestartsThePast() throws {
        let store = try open()
        defer { store.close() }
        try record(store, through: 12)
        try store.commit([HistoryFixture.creation(epoch: "e2")])
        XCTAssertEqual(try store.history(ofRoom: "lobby", after: 0, limit: 100),
                       HistoryPage(epoch: "e2", seq: 0, first: 1, events: []))
        try store.commit([HistoryFixture.commit(epoch: "e2", from: 1, to: 3)])
        XCTAssertEqual(try store.history(ofRoom: "lobby", after: 0, limit: 100)?.events.map(\.seq), [1, 2, 3])
        XCTAssertEqual(found(try store.pastState(ofRoom: "lobby", at: 2))?.epoch, "e2")
    }

    func testAChangeRecordedWithoutItsEventsRestartsThePastThere() throws {
        let store = try open()
        defer { store.close() }
        try record(store, through: 5)
        var commit = HistoryFixture.commit(from: 6, to: 8)
        commit.events = []
        try store.commit([commit])
        XCTAssertEqual(try store.history(ofRoom: "lobby", after: 0, limit: 100),
                       HistoryPage(epoch: "e1", seq: 8, first: 9, events: []))
        XCTAssertEqual(found(try store.pastState(ofRoom: "lobby", at: 8))?.scene, HistoryFixture.scene(after: 8))
        XCTAssertEqual(try store.pastState(ofRoom: "lobby", at: 5), .gone(first: 9))
    }

    func testHistoryAndBaseSurviveReopening() throws {
        var store = try open(historyLimit: 20)
        try record(store, through: 47, perCommit: 4)
        let page = try store.history(ofRoom: "lobby", after: 0, limit: 1000)
        let base = try store.pastState(ofRoom: "lobby", at: 27)
        store.close()

        store = try open(historyLimit: 20)
        XCTAssertEqual(try store.history(ofRoom: "lobby", after: 0, limit: 1000), page)
        XCTAssertEqual(try store.pastState(ofRoom: "lobby", at: 27), base)
        XCTAssertEqual(found(base)?.dragonStatus, HistoryFixture.label(after: 27))
        try store.commit([HistoryFixture.commit(from: 48, to: 50)])
        XCTAssertEqual(try store.history(ofRoom: "lobby", after: 0, limit: 1000)?.first, 31)
        store.close()

        // A lower limit on the next start prunes at the next commit of the room.
        store = try open(historyLimit: 5, historySize: 2)
        defer { store.close() }
        try store.commit([HistoryFixture.commit(from: 51, to: 51)])
        XCTAssertEqual(try store.history(ofRoom: "lobby", after: 0, limit: 1000)?.events.map(\.seq), Array(47...51))
        XCTAssertEqual(found(try store.pastState(ofRoom: "lobby", at: 46))?.scene, HistoryFixture.scene(after: 46))
    }

    func testReadsFromAnotherThreadWhileCommitsRunSeeWholeCommits() throws {
        let store = try open(historyLimit: 50)
        defer { store.close() }
        try store.commit([HistoryFixture.creation()])
        let lastSeq: UInt64 = 3000
        let problems = ProblemList()
        let done = DispatchSemaphore(value: 0)
        let finished = Flag()
        let readsDuringCommits = Counter()
        Thread {
            defer { done.signal() }
            var reads = 0
            while !finished.isSet || reads < 10 {
                reads += 1
                if !finished.isSet { readsDuringCommits.add() }
                do {
                    guard let page = try store.history(ofRoom: "lobby", after: 0, limit: 1000) else {
                        problems.add("no page"); continue
                    }
                    // A commit is seen whole: the events held run from first to seq, without a gap.
                    let expected = page.first <= page.seq ? Array(page.first...page.seq) : []
                    if page.events.map(\.seq) != expected { problems.add("page \(page.first)...\(page.seq) held \(page.events.map(\.seq))") }
                    if page.seq > 0 && page.seq - page.first + 1 != min(50, page.seq) { problems.add("held \(page.seq - page.first + 1)") }
                    let seq = page.seq
                    switch try store.pastState(ofRoom: "lobby", at: seq) {
                    case .found(let state):
                        if state.scene != HistoryFixture.scene(after: seq) && seq > 0 { problems.add("state at \(seq)") }
                    case .gone:
                        break  // pruned since the page was read
                    case .beyond, .unknownRoom:
                        problems.add("no state at \(seq)")
                    }
                    // The base may have moved on since the page was read, but it is never unreadable.
                    switch try store.pastState(ofRoom: "lobby", at: page.first - 1) {
                    case .found(let state):
                        if state.seq > 0 && state.scene != HistoryFixture.scene(after: state.seq) { problems.add("base") }
                    case .gone:
                        break
                    case .beyond, .unknownRoom:
                        problems.add("no base at \(page.first - 1)")
                    }
                } catch {
                    problems.add("\(error)")
                }
            }
        }.start()
        for start in stride(from: 1 as UInt64, through: lastSeq, by: 3) {
            try store.commit([HistoryFixture.commit(from: start, to: start + 2)])
        }
        finished.set()
        done.wait()
        XCTAssertEqual(problems.list.prefix(5), [])
        XCTAssertGreaterThan(readsDuringCommits.value, 5, "the reads ran while the commits did")
        XCTAssertEqual(try store.history(ofRoom: "lobby", after: 0, limit: 1000)?.first, lastSeq - 49)
    }

    /// Pruning frees pages that later commits reuse: a room that recorded
    /// three times its limit takes the room of one limit's worth of events.
    func testTheDatabaseStaysTheSameSizeOnceARoomIsAtItsLimit() throws {
        let limit: UInt64 = 3000
        var store = try open(historyLimit: Int(limit))
        try record(store, through: limit, perCommit: 7)
        store.close()
        let pagesAtLimit = try XCTUnwrap(Int(try HistoryFixture.sqlite(directory, "PRAGMA page_count")))

        store = try open(historyLimit: Int(limit))
        for start in stride(from: limit + 1, through: 3 * limit, by: 7) {
            try store.commit([HistoryFixture.commit(from: start, to: min(3 * limit, start + 6))])
        }
        store.close()
        let pagesAtThreeTimes = try XCTUnwrap(Int(try HistoryFixture.sqlite(directory, "PRAGMA page_count")))
        let free = try HistoryFixture.sqlite(directory, "PRAGMA freelist_count")
        XCTAssertEqual(try HistoryFixture.sqlite(directory, "SELECT count(*) FROM events"), "\(limit + 1)",
                       "the events held and the base")
        XCTAssertGreaterThan(pagesAtLimit, Int(limit) / 10)
        XCTAssertLessThanOrEqual(Double(pagesAtThreeTimes), Double(pagesAtLimit) * 1.05,
                                 "pages: \(pagesAtLimit) at the limit, \(pagesAtThreeTimes) (\(free) free) at three times it")
    }
}

/// Problems seen by a reading thread.
final class ProblemList: @unchecked Sendable {
    private let lock = NSLock()
    private var problems: [String] = []

    func add(_ problem: String) {
        lock.lock()
        problems.append(problem)
        lock.unlock()
    }

    var list: [String] {
        lock.lock()
        defer { lock.unlock() }
        return problems
    }
}

/// A flag one thread sets and another reads.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    func set() {
        lock.lock()
        value = true
        lock.unlock()
    }

    var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}

/// A count one thread raises and another reads.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func add() {
        lock.lock()
        count += 1
        lock.unlock()
    }

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}
