import Foundation
import HappyCore
import HappySQLite
import XCTest

final class SQLiteRoomStoreTests: XCTestCase {
    private var directory = ""

    override func setUp() {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("happy-sqlite-\(UUID().uuidString.prefix(8))").path
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func event(_ seq: UInt64) -> StoredEvent {
        StoredEvent(seq: seq, json: Array(#"{"type":"event","seq":\#(seq)}"#.utf8))
    }

    private func commit(_ room: String, epoch: String = "e1", from: UInt64, to: UInt64, happiness: Int = 50) -> RoomCommit {
        var scene = Scene.standard
        scene.face.happiness = happiness
        return RoomCommit(room: room, epoch: epoch, baseSeq: from - 1, seq: to, scene: scene,
                          events: (from...to).map(event))
    }

    func testUnknownRoomLoadsAsNil() throws {
        let store = try SQLiteRoomStore(directory: directory, historySize: 10, fsync: false)
        defer { store.close() }
        XCTAssertNil(try store.loadRoom(named: "lobby"))
    }

    func testCommittedRoomSurvivesReopening() throws {
        let first = try SQLiteRoomStore(directory: directory, historySize: 10, fsync: true)
        try first.commit([commit("lobby", from: 1, to: 3, happiness: 80), commit("red", epoch: "e2", from: 1, to: 1)])
        first.close()

        let second = try SQLiteRoomStore(directory: directory, historySize: 10, fsync: true)
        defer { second.close() }
        let lobby = try XCTUnwrap(try second.loadRoom(named: "lobby"))
        XCTAssertEqual(lobby.epoch, "e1")
        XCTAssertEqual(lobby.seq, 3)
        XCTAssertEqual(lobby.scene.face.happiness, 80)
        XCTAssertEqual(lobby.history.map(\.seq), [1, 2, 3])
        XCTAssertEqual(lobby.history[2].json, event(3).json)
        XCTAssertEqual(try second.loadRoom(named: "red")?.epoch, "e2")
    }

    func testHistoryKeepsOnlyTheRetainedNumberOfEvents() throws {
        let store = try SQLiteRoomStore(directory: directory, historySize: 5, historyLimit: 7, fsync: false)
        for seq in stride(from: 1 as UInt64, through: 21, by: 4) {
            try store.commit([commit("lobby", from: seq, to: seq + 3)])
        }
        let room = try XCTUnwrap(try store.loadRoom(named: "lobby"))
        XCTAssertEqual(room.seq, 24)
        XCTAssertEqual(room.history.map(\.seq), [20, 21, 22, 23, 24])
        store.close()  // the store holds the database exclusively while open
        XCTAssertEqual(try rowCount("events"), 8, "old events must be deleted, not only skipped on load "
                       + "(7 are held, 1 more is the base of the history)")
    }

    func testAResumeKeepsHistorySizeEventsWhenTheHistoryLimitIsLower() throws {
        let store = try SQLiteRoomStore(directory: directory, historySize: 6, historyLimit: 2, fsync: false)
        defer { store.close() }
        try store.commit([HistoryFixture.creation(), HistoryFixture.commit(from: 1, to: 10)])
        XCTAssertEqual(try store.loadRoom(named: "lobby")?.history.map(\.seq), [5, 6, 7, 8, 9, 10])
        // The history is the newest 2 all the same, as if only they were kept.
        XCTAssertEqual(try store.history(ofRoom: "lobby", after: 0, limit: 100)?.events.map(\.seq), [9, 10])
        XCTAssertEqual(try store.history(ofRoom: "lobby", after: 0, limit: 100)?.first, 9)
        XCTAssertEqual(try store.pastState(ofRoom: "lobby", at: 8),
                       .found(PastState(epoch: "e1", seq: 8, scene: HistoryFixture.scene(after: 8),
                                        dragonStatus: HistoryFixture.label(after: 8))))
        XCTAssertEqual(try store.pastState(ofRoom: "lobby", at: 7), .gone(first: 9))
    }

    func testWithoutHistoryOnlyTheNewestStateIsAnsweredAndAResumeStillReplays() throws {
        let store = try SQLiteRoomStore(directory: directory, historySize: 4, historyLimit: 0, fsync: false)
        defer { store.close() }
        try store.commit([HistoryFixture.creation(), HistoryFixture.commit(from: 1, to: 3)])
        XCTAssertEqual(try store.history(ofRoom: "lobby", after: 0, limit: 10),
                       HistoryPage(epoch: "e1", seq: 3, first: 4, events: []))
        XCTAssertEqual(try store.pastState(ofRoom: "lobby", at: 3),
                       .found(PastState(epoch: "e1", seq: 3, scene: HistoryFixture.scene(after: 3),
                                        dragonStatus: HistoryFixture.label(after: 3))))
        XCTAssertEqual(try store.pastState(ofRoom: "lobby", at: 2), .gone(first: 4))
        XCTAssertEqual(try store.loadRoom(named: "lobby")?.history.count, 3)
    }

    func testZeroHistoryStoresStateOnly() throws {
        let store = try SQLiteRoomStore(directory: directory, historySize: 0, fsync: false)
        defer { store.close() }
        try store.commit([commit("lobby", from: 1, to: 2)])
        XCTAssertEqual(try store.loadRoom(named: "lobby")?.history.count, 0)
        XCTAssertEqual(try store.loadRoom(named: "lobby")?.seq, 2)
    }

    func testCorruptFileIsRefusedAndLeftAlone() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = (directory as NSString).appendingPathComponent(SQLiteRoomStore.fileName)
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try SQLiteRoomStore(directory: directory, historySize: 10, fsync: true)) { error in
            let message = "\(error)"
            XCTAssertTrue(message.contains(path), message)
            XCTAssertTrue(message.contains("move it away") || message.contains("backup"), message)
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), garbage, "the damaged file must not be overwritten")
    }

    func testDamagedPageFailsTheIntegrityCheck() throws {
        let store = try SQLiteRoomStore(directory: directory, historySize: 1000, fsync: true)
        for seq in stride(from: 1 as UInt64, through: 2000, by: 10) {
            try store.commit([commit("lobby", from: seq, to: seq + 9)])
        }
        store.close()
        let path = (directory as NSString).appendingPathComponent(SQLiteRoomStore.fileName)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertGreaterThan(bytes.count, 16384)
        for index in 8192..<12288 { bytes[index] = 0xA5 }
        try bytes.write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try SQLiteRoomStore(directory: directory, historySize: 10, fsync: true))
    }

    func testDatabasePathThatIsADirectoryIsRefused() throws {
        let path = (directory as NSString).appendingPathComponent(SQLiteRoomStore.fileName)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        XCTAssertThrowsError(try SQLiteRoomStore(directory: directory, historySize: 10, fsync: true)) { error in
            XCTAssertTrue("\(error)".contains("is a directory"), "\(error)")
        }
    }

    func testSecondStoreOnTheSameDirectoryIsRefused() throws {
        let first = try SQLiteRoomStore(directory: directory, historySize: 10, fsync: false)
        defer { first.close() }
        XCTAssertThrowsError(try SQLiteRoomStore(directory: directory, historySize: 10, fsync: false)) { error in
            XCTAssertTrue("\(error)".contains("another happyserver"), "\(error)")
        }
    }

    func testUsesWriteAheadLogging() throws {
        let store = try SQLiteRoomStore(directory: directory, historySize: 10, fsync: true)
        try store.commit([commit("lobby", from: 1, to: 1)])
        let wal = (directory as NSString).appendingPathComponent(SQLiteRoomStore.fileName + "-wal")
        XCTAssertTrue(FileManager.default.fileExists(atPath: wal))
        store.close()
    }

    private func rowCount(_ table: String) throws -> Int {
        let path = (directory as NSString).appendingPathComponent(SQLiteRoomStore.fileName)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [path, "SELECT count(*) FROM \(table)"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        process.waitUntilExit()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }
}

final class SQLiteSchemaMigrationTests: XCTestCase {
    func testASchemaOneDatabaseIsMovedToSlotsWithItsHistory() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("happy-v1-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = (directory as NSString).appendingPathComponent(SQLiteRoomStore.fileName)
        var sql = """
            CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            INSERT INTO meta VALUES ('schema', '1');
            CREATE TABLE rooms (name TEXT PRIMARY KEY, epoch TEXT NOT NULL, seq INTEGER NOT NULL, scene TEXT NOT NULL);
            CREATE TABLE events (room TEXT NOT NULL, seq INTEGER NOT NULL, json BLOB NOT NULL, PRIMARY KEY (room, seq)) WITHOUT ROWID;
            INSERT INTO rooms VALUES ('lobby', 'old-epoch', 12, '\(String(decoding: ServerMessageEncoder.sceneJSON(.standard), as: UTF8.self))');
            """
        for seq in 3...12 { sql += "INSERT INTO events VALUES ('lobby', \(seq), 'event \(seq)');\n" }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [path, sql]
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)

        let store = try SQLiteRoomStore(directory: directory, historySize: 5, fsync: false)
        defer { store.close() }
        let room = try XCTUnwrap(try store.loadRoom(named: "lobby"))
        XCTAssertEqual(room.epoch, "old-epoch")
        XCTAssertEqual(room.seq, 12)
        XCTAssertEqual(room.history.map(\.seq), [8, 9, 10, 11, 12])
        XCTAssertEqual(room.history.last?.json, Array("event 12".utf8))
        // The oldest event becomes the base of the history; its text holds no state to show.
        XCTAssertEqual(try store.history(ofRoom: "lobby", after: 0, limit: 100)?.events.map(\.seq), Array(4...12))
        XCTAssertEqual(try store.pastState(ofRoom: "lobby", at: 2), .gone(first: 4))
        XCTAssertThrowsError(try store.pastState(ofRoom: "lobby", at: 3)) { error in
            XCTAssertEqual((error as? StoreError)?.kind, .damaged)
        }
        try store.commit([RoomCommit(room: "lobby", epoch: "old-epoch", baseSeq: 12, seq: 13, scene: .standard,
                                     events: [StoredEvent(seq: 13, json: Array("event 13".utf8))])])
        XCTAssertEqual(try store.loadRoom(named: "lobby")?.history.map(\.seq), [9, 10, 11, 12, 13])
    }

    /// A database as the previous release wrote it: one packed row per commit in `batches`.
    func testASchemaTwoDatabaseKeepsItsRoomsAndEventsWithTheOldestEventAsTheBase() throws {
        let directory = HistoryFixture.temporaryDirectory("happy-v2")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        func room(_ name: String, seq: UInt64) -> String {
            let scene = String(decoding: ServerMessageEncoder.sceneJSON(HistoryFixture.scene(after: seq)), as: UTF8.self)
            return "INSERT INTO rooms VALUES ('\(name)', 'old-epoch', \(seq), '\(scene)');\n"
        }
        func batch(_ name: String, _ seqs: ClosedRange<UInt64>) -> String {
            // Schema 2 packed a commit's events newline-separated.
            let packed = seqs.map { HistoryFixture.event($0, room: name).json }.joined(separator: [0x0A])
            let hex = packed.map { String(format: "%02X", $0) }.joined()
            return "INSERT INTO batches VALUES ('\(name)', \(seqs.upperBound), \(seqs.lowerBound), X'\(hex)');\n"
        }
        // The statements of schema 2, as SQLiteRoomStore created them.
        var sql = """
            PRAGMA journal_mode = WAL;
            CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS rooms (
                name TEXT PRIMARY KEY, epoch TEXT NOT NULL, seq INTEGER NOT NULL, scene TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS batches (
                room TEXT NOT NULL, last INTEGER NOT NULL, first INTEGER NOT NULL, events BLOB NOT NULL,
                PRIMARY KEY (room, last)) WITHOUT ROWID;
            INSERT INTO meta (key, value) VALUES ('schema', '2');

            """
        sql += room("lobby", seq: 30) + batch("lobby", 11...15) + batch("lobby", 16...20) + batch("lobby", 21...30)
        sql += room("quiet", seq: 4)
        sql += room("gap", seq: 8) + batch("gap", 1...3) + batch("gap", 6...8)
        sql += batch("orphan", 1...2)
        XCTAssertEqual(try HistoryFixture.sqlite(directory, sql), "wal")

        var store = try SQLiteRoomStore(directory: directory, historySize: 5, historyLimit: 100, fsync: false)
        let lobby = try XCTUnwrap(try store.history(ofRoom: "lobby", after: 0, limit: 100))
        XCTAssertEqual(lobby.epoch, "old-epoch")
        XCTAssertEqual(lobby.seq, 30)
        XCTAssertEqual(lobby.first, 12)
        XCTAssertEqual(lobby.events.map(\.seq), Array(12...30))
        XCTAssertEqual(lobby.events.last?.json, HistoryFixture.event(30).json)
        XCTAssertEqual(Set(lobby.events.map(\.dragonStatus)), [""], "events recorded without labels")
        XCTAssertEqual(try store.pastState(ofRoom: "lobby", at: 11),
                       .found(PastState(epoch: "old-epoch", seq: 11, scene: HistoryFixture.scene(after: 11), dragonStatus: "")))
        XCTAssertEqual(try store.pastState(ofRoom: "lobby", at: 10), .gone(first: 12))
        XCTAssertEqual(try store.loadRoom(named: "lobby")?.history.map(\.seq), [26, 27, 28, 29, 30])
        XCTAssertEqual(try store.history(ofRoom: "quiet", after: 0, limit: 100),
                       HistoryPage(epoch: "old-epoch", seq: 4, first: 5, events: []))
        XCTAssertEqual(try store.pastState(ofRoom: "quiet", at: 4),
                       .found(PastState(epoch: "old-epoch", seq: 4, scene: HistoryFixture.scene(after: 4), dragonStatus: "")))
        XCTAssertEqual(try store.history(ofRoom: "gap", after: 0, limit: 100)?.events.map(\.seq), [7, 8],
                       "only the events without a gap up to the room's seq")
        XCTAssertNil(try store.history(ofRoom: "orphan", after: 0, limit: 100))
        try store.commit([HistoryFixture.commit(epoch: "old-epoch", from: 31, to: 32)])
        store.close()

        XCTAssertEqual(try HistoryFixture.sqlite(directory, "SELECT value FROM meta WHERE key = 'schema'"), "3")
        XCTAssertEqual(try HistoryFixture.sqlite(directory, "SELECT count(*) FROM sqlite_master WHERE name = 'batches'"), "0")
        store = try SQLiteRoomStore(directory: directory, historySize: 5, historyLimit: 100, fsync: false)
        defer { store.close() }
        XCTAssertEqual(try store.history(ofRoom: "lobby", after: 29, limit: 100)?.events, [
            HistoryFixture.event(30).withLabel(""), HistoryFixture.event(31), HistoryFixture.event(32),
        ])
    }
}

extension StoredEvent {
    func withLabel(_ label: String) -> StoredEvent {
        StoredEvent(seq: seq, json: json, dragonStatus: label)
    }
}
