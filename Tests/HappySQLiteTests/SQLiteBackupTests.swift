import Foundation
import HappyCore
import HappySQLite
import XCTest

/// Online backups of the store, their check, and restoring one.
final class SQLiteBackupTests: XCTestCase {
    private var directory = ""
    private var dataDir: String { directory + "/data" }

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("happy-backup-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static func commit(_ room: String, from: UInt64, to: UInt64) -> RoomCommit {
        var scene = Scene.standard
        scene.face.happiness = Int(to % 100)
        let events = (from...to).map { seq in
            StoredEvent(seq: seq, json: Array(#"{"type":"event","seq":\#(seq),"state":\#(sceneJSON(scene))}"#.utf8))
        }
        return RoomCommit(room: room, epoch: "e-\(room)", baseSeq: from - 1, seq: to, scene: scene, events: events)
    }

    private static func sceneJSON(_ scene: Scene) -> String {
        String(decoding: ServerMessageEncoder.sceneJSON(scene), as: UTF8.self)
    }

    private func openStore(_ path: String? = nil) throws -> SQLiteRoomStore {
        try SQLiteRoomStore(directory: path ?? dataDir, historySize: 10, fsync: false)
    }

    func testABackupTakenWhileCommitsGoOnHoldsOneCommitWhole() throws {
        let store = try openStore()
        defer { store.close() }
        try store.commit([Self.commit("red", from: 1, to: 1), Self.commit("blue", from: 1, to: 1)])
        // A long history, so that a copy takes a while.
        for first in stride(from: 1 as UInt64, to: 30_000, by: 1000) {
            try store.commit([Self.commit("long", from: first, to: first + 999)])
        }
        // Every commit moves both rooms to the same seq: a copy that tore a
        // commit apart would hold them at different seqs.
        let writing = Atomic(true), written = Atomic(1)
        let writer = Thread {
            var seq: UInt64 = 1
            while writing.value {
                seq += 1
                _ = try? store.commit([Self.commit("red", from: seq, to: seq), Self.commit("blue", from: seq, to: seq)])
                written.value = Int(seq)
            }
        }
        writer.start()
        defer { writing.value = false }
        var backups: [(path: String, during: ClosedRange<Int>)] = []
        for index in 0..<5 {
            let seqBefore = written.value
            while written.value < seqBefore + 20 { usleep(1000) }
            let path = "\(directory)/copy-\(index).sqlite3"
            let start = written.value
            try store.backup(to: path)
            backups.append((path, start...written.value))
        }
        writing.value = false
        while !writer.isFinished { usleep(1000) }

        XCTAssertGreaterThan(backups.map { $0.during.count - 1 }.reduce(0, +), 0,
                             "commits went on while the copies were made")
        var seqs: [UInt64] = []
        for (index, (path, during)) in backups.enumerated() {
            let facts = try SQLiteBackup.check(path)
            XCTAssertEqual(facts.rooms, 3)
            XCTAssertEqual(facts.schema, "3")
            let restored = "\(directory)/restored-\(index)"
            try FileManager.default.createDirectory(atPath: restored, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: path, toPath: restored + "/" + SQLiteRoomStore.fileName)
            let copy = try openStore(restored)
            let red = try XCTUnwrap(try copy.loadRoom(named: "red"))
            let blue = try XCTUnwrap(try copy.loadRoom(named: "blue"))
            XCTAssertEqual(red.seq, blue.seq, "both rooms as one commit left them")
            XCTAssertEqual(red.history.last?.seq, red.seq, "the events up to the state, none after")
            let tail = try copy.history(ofRoom: "red", after: red.seq - 20, limit: 1000)?.events.map(\.seq)
            XCTAssertEqual(tail, Array(red.seq - 19...red.seq), "the history runs up to the state, none after")
            XCTAssertEqual(try copy.loadRoom(named: "long")?.seq, 30_000)
            XCTAssertTrue(during.contains(Int(red.seq)), "\(red.seq): a commit made while the copy was made, \(during)")
            seqs.append(red.seq)
            copy.close()
        }
        XCTAssertEqual(seqs, seqs.sorted(), "each backup newer than the one before")
        XCTAssertGreaterThan(seqs.last ?? 0, seqs.first ?? 0)
    }

    func testABackupIsOnePrivateFileAndNeverReplacesAnother() throws {
        let store = try openStore()
        defer { store.close() }
        try store.commit([Self.commit("red", from: 1, to: 3)])
        let path = directory + "/copy.sqlite3"
        try store.backup(to: path)
        var status = stat()
        XCTAssertEqual(stat(path, &status), 0)
        XCTAssertEqual(status.st_mode & 0o777, 0o600)
        let beside = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("copy") }
        XCTAssertEqual(beside, ["copy.sqlite3"], "no journal, no unfinished copy beside it")
        XCTAssertThrowsError(try store.backup(to: path)) { error in
            XCTAssertTrue("\(error)".contains("exists"), "\(error)")
        }
        XCTAssertEqual(try SQLiteBackup.check(path).rooms, 1, "the first copy is untouched")
    }

    func testTheCheckRefusesWhatIsNotAWholeBackup() throws {
        let store = try openStore()
        try store.commit([Self.commit("red", from: 1, to: 40)])
        let good = directory + "/good.sqlite3"
        try store.backup(to: good)
        store.close()

        let garbage = directory + "/garbage.sqlite3"
        try Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7919) }).write(to: URL(fileURLWithPath: garbage))
        let truncated = directory + "/truncated.sqlite3"
        let whole = try Data(contentsOf: URL(fileURLWithPath: good))
        try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: truncated))
        let empty = directory + "/empty.sqlite3"
        let other = try SQLiteRoomStore(directory: directory + "/other", historySize: 1, fsync: false)
        other.close()
        try FileManager.default.copyItem(atPath: directory + "/other/" + SQLiteRoomStore.fileName, toPath: empty)
        XCTAssertEqual(try SQLiteBackup.check(empty).rooms, 0, "a stopped server's empty database will do")
        let withLog = directory + "/with-log.sqlite3"
        try FileManager.default.copyItem(atPath: good, toPath: withLog)
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: withLog + "-wal"))

        for (path, expected) in [(garbage, "not a database"), (truncated, "not a usable backup"), (withLog, "write-ahead log"),
                                 (directory + "/missing.sqlite3", "cannot read")] {
            XCTAssertThrowsError(try SQLiteBackup.check(path), path) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(path): \(error)")
            }
        }
        XCTAssertEqual(try SQLiteBackup.check(good).rooms, 1)
    }

    func testRestoreIsRefusedWhileAStoreHoldsTheDirectory() throws {
        let store = try openStore()
        defer { store.close() }
        try store.commit([Self.commit("red", from: 1, to: 3)])
        let backup = directory + "/copy.sqlite3"
        try store.backup(to: backup)
        let before = try FileManager.default.contentsOfDirectory(atPath: dataDir).sorted()
        XCTAssertThrowsError(try SQLiteRestore.restore(from: backup, intoDirectory: dataDir)) { error in
            let failure = error as? SQLiteRestore.Failure
            XCTAssertEqual(failure.map { "\($0.reason)" }, "serverRunning")
            XCTAssertTrue(failure?.message.contains("stop it") == true, "\(error)")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dataDir).sorted(), before)
        XCTAssertEqual(try store.loadRoom(named: "red")?.seq, 3)
    }

    func testRestoreSetsTheOldDatabaseAsideAndKeepsStateAndHistoryUnderNewEpochs() throws {
        let store = try openStore()
        try store.commit([Self.commit("red", from: 1, to: 5), Self.commit("blue", from: 1, to: 2)])
        let backup = directory + "/copy.sqlite3"
        try store.backup(to: backup)
        try store.commit([Self.commit("red", from: 6, to: 9)])
        store.close()

        let report = try SQLiteRestore.restore(from: backup, intoDirectory: dataDir,
                                               at: Date(timeIntervalSince1970: 1_796_590_800))
        XCTAssertEqual(report.backup.rooms, 2)
        XCTAssertEqual(report.installed, dataDir + "/" + SQLiteRoomStore.fileName)
        XCTAssertEqual(report.setAside, [dataDir + "/happy.sqlite3.before-restore-20261206T210000Z"])
        let files = try FileManager.default.contentsOfDirectory(atPath: dataDir)
        XCTAssertFalse(files.contains { $0.hasSuffix(".restoring") }, "\(files)")

        let restored = try openStore()
        defer { restored.close() }
        let red = try XCTUnwrap(try restored.loadRoom(named: "red"))
        XCTAssertEqual(red.seq, 5)
        XCTAssertEqual(red.scene, Self.commit("red", from: 5, to: 5).scene)
        XCTAssertNotEqual(red.epoch, "e-red", "a new epoch: the seqs after 5 are not the lost ones")
        XCTAssertEqual(try restored.history(ofRoom: "red", after: 0, limit: 100)?.events,
                       Self.commit("red", from: 1, to: 5).events)
        XCTAssertEqual(try restored.loadRoom(named: "blue")?.seq, 2)
        XCTAssertEqual(try SQLiteBackup.check(backup).rooms, 2, "the backup itself is left as it was")

        let aside = try SQLiteRoomStore(directory: directory + "/aside", historySize: 10, fsync: false)
        aside.close()
        try FileManager.default.removeItem(atPath: directory + "/aside/" + SQLiteRoomStore.fileName)
        try FileManager.default.copyItem(atPath: report.setAside[0], toPath: directory + "/aside/" + SQLiteRoomStore.fileName)
        let old = try SQLiteRoomStore(directory: directory + "/aside", historySize: 10, fsync: false)
        defer { old.close() }
        XCTAssertEqual(try old.loadRoom(named: "red")?.seq, 9, "the replaced database, whole")
    }
}

/// A value shared with a thread, under a lock.
private final class Atomic<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) {
        stored = value
    }

    var value: Value {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); stored = newValue; lock.unlock() }
    }
}
