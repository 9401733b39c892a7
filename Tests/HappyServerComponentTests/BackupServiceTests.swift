import Foundation
import HappyCore
@testable import HappyServer
import XCTest

/// `POST /api/backup`, periodic backups and their folder, in-process: the
/// copy runs on the backup thread, its outcome comes back through the inbox.
final class BackupServiceTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("happy-backups-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func server(every seconds: Int = 0, keep: Int = 7, dir: String? = nil,
                        store: (any RoomStore)? = ScriptedStore(synchronous: false)) -> TestServer {
        TestServer(config: TestServer.config {
            $0.dataDir = directory + "/data"
            $0.backup.dir = dir ?? ""
            $0.backup.everySeconds = seconds
            $0.backup.keep = keep
        }, store: store)
    }

    private func backupFiles(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasPrefix("happy-") }.sorted()
    }

    // MARK: the folder

    func testNamesSortInTimeAndOnlyBackupsAreCounted() {
        let date = Date(timeIntervalSince1970: 1_796_590_800)
        XCTAssertEqual(BackupFolder.name(at: date, besides: []), "happy-20261206T210000Z.sqlite3")
        XCTAssertEqual(BackupFolder.name(at: date, besides: ["happy-20261206T210000Z.sqlite3"]),
                       "happy-20261206T210000Z-2.sqlite3")
        XCTAssertEqual(BackupFolder.name(at: date, besides: ["happy-20261206T210000Z-2.sqlite3", "notes.txt"]),
                       "happy-20261206T210000Z-3.sqlite3", "after every backup of that second, even when the first is gone")
        XCTAssertEqual(BackupFolder.name(at: date, besides: ["happy-20261206T210000Z.sqlite3.partial"]),
                       "happy-20261206T210000Z-2.sqlite3", "not the name of one being written")
        let names = ["happy-20261206T210000Z-2.sqlite3", "happy-20261205T090000Z.sqlite3", "keep-me.sqlite3",
                     "happy-20261206T210000Z.sqlite3", "happy-20261206T210000Z-10.sqlite3", "happy-today.sqlite3"]
        XCTAssertEqual(BackupFolder.surplus(of: names, keep: 2),
                       ["happy-20261205T090000Z.sqlite3", "happy-20261206T210000Z.sqlite3"])
        XCTAssertEqual(BackupFolder.surplus(of: names, keep: 2, sparing: "happy-20261205T090000Z.sqlite3"),
                       ["happy-20261206T210000Z.sqlite3", "happy-20261206T210000Z-2.sqlite3"],
                       "the one just written stays, even when an earlier clock named it")
        XCTAssertEqual(BackupFolder.newest(of: names), date)
    }

    // MARK: POST /api/backup

    func testABackupOnRequestIsAnsweredOnceWritten() throws {
        let test = server()
        XCTAssertEqual(test.request("POST", "/api/backup").status, 401)
        XCTAssertEqual(test.request("GET", "/api/backup", headers: TestServer.operatorHeaders).status, 405)
        XCTAssertEqual(test.request("POST", "/api/backup", headers: TestServer.operatorHeaders.merging(
            ["origin": "http://elsewhere.example"]) { $1 }).status, 403)

        let asked = test.begin("POST", "/api/backup", headers: TestServer.operatorHeaders)
        XCTAssertNil(asked.status, "not answered before the copy is written")
        XCTAssertTrue(asked.transport.keptOpenWithoutTimeout, "a long copy is not cut off by the request timeout")
        test.finish(asked)
        XCTAssertEqual(asked.status, 200, asked.text)
        let path = try XCTUnwrap(asked.json?["path"]?.stringValue)
        XCTAssertEqual((path as NSString).deletingLastPathComponent, directory + "/data/backups",
                       "without backup.dir: dataDir/backups")
        XCTAssertTrue(FileManager.default.fileExists(atPath: path))
        XCTAssertNotNil(asked.json?["bytes"]?.intValue)
        XCTAssertNotNil(asked.json?["seconds"]?.doubleValue)
        let metrics = test.request("GET", "/metrics").text
        XCTAssertTrue(metrics.contains("happy_backups_total 1\n"), metrics)
        XCTAssertFalse(metrics.contains("happy_backup_last_success_timestamp_seconds 0\n"), metrics)
    }

    func testRequestsDuringABackupGetTheNextOne() throws {
        let test = server()
        let first = test.begin("POST", "/api/backup", headers: TestServer.operatorHeaders)
        let second = test.begin("POST", "/api/backup", headers: TestServer.operatorHeaders)
        let third = test.begin("POST", "/api/backup", headers: TestServer.operatorHeaders)
        for exchange in [first, second, third] { test.finish(exchange) }
        let paths = [first, second, third].compactMap { $0.json?["path"]?.stringValue }
        XCTAssertEqual(paths.count, 3)
        XCTAssertNotEqual(paths[0], paths[1], "one taken after the second asked")
        XCTAssertEqual(paths[1], paths[2], "one backup answers everyone who waited for it")
        XCTAssertEqual(backupFiles(in: directory + "/data/backups").count, 2)
    }

    func testAStoreWithoutAFileAnswers409() {
        let test = server(store: MemoryRoomStore(historySize: 10))
        let asked = test.begin("POST", "/api/backup", headers: TestServer.operatorHeaders)
        test.finish(asked)
        XCTAssertEqual(asked.status, 409)
        XCTAssertTrue(asked.json?["message"]?.stringValue?.contains("memory") == true, asked.text)
        XCTAssertEqual(backupFiles(in: directory + "/data/backups"), [])
    }

    // MARK: periodic

    func testPeriodicBackupsKeepTheNewest() throws {
        let folder = directory + "/periodic"
        let test = server(every: 3600, keep: 2, dir: folder)
        XCTAssertEqual(test.timers.delay(of: .backups), 3600, "the first after everySeconds in an empty folder")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data().write(to: URL(fileURLWithPath: folder + "/notes.txt"))
        for _ in 0..<4 {
            test.server.fire(.backups)
            test.waitUntil("the backup") { !test.server.backups.isRunning }
        }
        XCTAssertEqual(test.timers.delay(of: .backups), 3600)
        let kept = backupFiles(in: folder)
        XCTAssertEqual(kept.count, 2, "\(kept)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder + "/notes.txt"), "other files are not touched")

        let restarted = server(every: 3600, keep: 2, dir: folder)
        XCTAssertLessThanOrEqual(restarted.timers.delay(of: .backups) ?? 0, 3600)
        XCTAssertGreaterThan(restarted.timers.delay(of: .backups) ?? 0, 3500,
                             "a restart does not put the next one off, nor bring it forward")
    }

    func testPeriodicBackupsStopForAStoreThatMakesNone() {
        let test = server(every: 60, dir: directory + "/none", store: MemoryRoomStore(historySize: 10))
        test.server.fire(.backups)
        test.waitUntil("the attempt") { !test.server.backups.isRunning }
        test.advance(by: 61)
        test.turn()
        XCTAssertFalse(test.server.backups.isRunning, "no second attempt")
    }
}
