import Foundation
import HappyCore
import HappySQLite
import XCTest

/// What `happyserver backup` and `restore` refuse, periodic backups, and
/// `POST /api/backup`'s access rules, on real servers.
final class BackupCommandTests: XCTestCase {
    private func backup(_ server: ServerProcess, to path: String) throws -> ServerProcess.Outcome {
        try ServerProcess.run(["backup", "--config", server.configURL.path, "--port", "\(server.port)", "--to", path],
                              timeout: 30)
    }

    private func restore(_ server: ServerProcess, from path: String) throws -> ServerProcess.Outcome {
        try ServerProcess.run(["restore", "--config", server.configURL.path, "--from", path], timeout: 30)
    }

    private func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    /// The data directory's files and their contents (the server's own backups aside).
    private func snapshot(of server: ServerProcess) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: server.dataDirectory.path) where name != "backups" {
            files[name] = try Data(contentsOf: server.dataDirectory.appendingPathComponent(name))
        }
        return files
    }

    func testRestoreIsRefusedWhileTheServerRunsAndChangesNothing() throws {
        let server = try ServerProcess()
        let (alice, _) = try TestClient.join(server, room: "keep", name: "alice")
        alice.intent("dragon.forward", id: "1")
        XCTAssertNotNil(alice.next(type: "ack"))
        let file = server.directory.appendingPathComponent("copy.sqlite3").path
        XCTAssertEqual(try backup(server, to: file).status, 0)
        alice.intent("dragon.forward", id: "2")
        XCTAssertNotNil(alice.next(type: "ack"))

        let before = try snapshot(of: server)
        let refused = try restore(server, from: file)
        XCTAssertEqual(refused.status, 75, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("is running on the data directory"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("nothing was changed"), refused.stderr)
        XCTAssertEqual(try snapshot(of: server), before, "the data directory is untouched")
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/state?room=keep").json?["seq"]?.intValue, 2)
    }

    func testACorruptBackupIsRefusedAndTheDatabaseStays() throws {
        let server = try ServerProcess()
        let (alice, _) = try TestClient.join(server, room: "keep", name: "alice")
        for id in 0..<30 {
            alice.intent("face.setHappiness", id: "\(id)", ["value": id])
            XCTAssertNotNil(alice.next(type: "ack"))
        }
        let file = server.directory.appendingPathComponent("copy.sqlite3").path
        XCTAssertEqual(try backup(server, to: file).status, 0)
        server.stop()
        let before = try snapshot(of: server)

        let whole = try Data(contentsOf: URL(fileURLWithPath: file))
        let truncated = server.directory.appendingPathComponent("truncated.sqlite3").path
        try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: truncated))
        let garbage = server.directory.appendingPathComponent("garbage.sqlite3").path
        var scrambled = whole
        for offset in stride(from: 0, to: scrambled.count, by: 97) { scrambled[offset] ^= 0x5A }
        try scrambled.write(to: URL(fileURLWithPath: garbage))
        for path in [truncated, garbage] {
            let refused = try restore(server, from: path)
            XCTAssertEqual(refused.status, 65, "\(path): \(refused.stderr)")
            XCTAssertTrue(refused.stderr.contains("is not a usable backup"), refused.stderr)
            XCTAssertTrue(refused.stderr.contains(path), "names the backup: \(refused.stderr)")
        }
        XCTAssertEqual(try snapshot(of: server), before, "nothing installed, nothing moved aside, nothing left behind")

        let restored = try restore(server, from: file)
        XCTAssertEqual(restored.status, 0, restored.stderr)
        XCTAssertTrue(restored.stdout.contains("before-restore-"), restored.stdout)
    }

    func testPeriodicBackupsWriteFilesAndKeepTheNewest() throws {
        let server = try ServerProcess(["backup": ["dir": "backups", "everySeconds": 1, "keep": 2]])
        let (alice, _) = try TestClient.join(server, name: "alice")
        alice.intent("dragon.forward", id: "1")
        XCTAssertNotNil(alice.next(type: "ack"))
        let log = try eventually(seconds: 20) {
            server.logText.components(separatedBy: "backup written").count - 1 >= 4 ? server.logText : nil
        }
        XCTAssertTrue(log.contains("old backup removed"), log)
        server.stop()
        let folder = server.directory.appendingPathComponent("backups")  // relative to the config's folder
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        XCTAssertEqual(files.count, 2, "\(files)")
        XCTAssertEqual(try mode(folder.path), 0o700)
        for name in files {
            XCTAssertTrue(name.hasPrefix("happy-") && name.hasSuffix(".sqlite3"), name)
            let path = folder.appendingPathComponent(name).path
            XCTAssertEqual(try mode(path), 0o600, name)
            XCTAssertEqual(try SQLiteBackup.check(path).rooms, 1, name)
            XCTAssertTrue(log.contains("path=\(path)"), "\(name) is one the log names")
        }
    }

    func testBackingUpTakesTheOperatorKeyAndAServerWithoutADatabaseHasNone() throws {
        let server = try ServerProcess()
        XCTAssertEqual(try HTTP.post("\(server.httpBase)/api/backup", body: "").status, 401)
        XCTAssertEqual(try HTTP.post("\(server.httpBase)/api/backup", body: "",
                                     headers: ["Authorization": "Bearer not-the-key"]).status, 401)
        let made = try HTTP.post("\(server.httpBase)/api/backup", body: "", headers: server.operatorHeaders)
        XCTAssertEqual(made.status, 200, made.text)
        XCTAssertTrue(made.json?["path"]?.stringValue?.hasPrefix(server.dataDirectory.path + "/backups/happy-") == true,
                      made.text)

        let memory = try ServerProcess(["persistence": ["enabled": false]])
        let refused = try HTTP.post("\(memory.httpBase)/api/backup", body: "", headers: memory.operatorHeaders)
        XCTAssertEqual(refused.status, 409, refused.text)
        XCTAssertTrue(refused.json?["message"]?.stringValue?.contains("memory") == true, refused.text)
        let command = try backup(memory, to: memory.directory.appendingPathComponent("x.sqlite3").path)
        XCTAssertEqual(command.status, 69, command.stderr)
        XCTAssertTrue(command.stderr.contains("no database"), command.stderr)
    }

    func testInRedisModeTheCommandsPointAtRedisAndNoServerMeansSaySo() throws {
        let redis = try ServerProcess(["cluster": ["redis": "redis://127.0.0.1:1/0"]], start: false)
        for arguments in [["backup", "--to", "x.sqlite3", "--port", "1"], ["restore", "--from", "x.sqlite3"]] {
            let outcome = try ServerProcess.run(arguments.prefix(1) + ["--config", redis.configURL.path] + arguments.dropFirst())
            XCTAssertEqual(outcome.status, 69, outcome.stderr)
            XCTAssertTrue(outcome.stderr.contains("RDB snapshots") && outcome.stderr.contains("append-only file"),
                          outcome.stderr)
        }
        let neverRan = try ServerProcess(start: false)
        let noKey = try ServerProcess.run(["backup", "--config", neverRan.configURL.path, "--port", "1", "--to", "x"])
        XCTAssertEqual(noKey.status, 69, noKey.stderr)
        XCTAssertTrue(noKey.stderr.contains("no server has run"), noKey.stderr)
        let stopped = try ServerProcess()
        stopped.stop()
        let nobody = try ServerProcess.run(["backup", "--config", stopped.configURL.path, "--port", "1", "--to", "x"])
        XCTAssertEqual(nobody.status, 69, nobody.stderr)
        XCTAssertTrue(nobody.stderr.contains("is it running"), nobody.stderr)
        XCTAssertTrue(nobody.stderr.contains("copy its dataDir/happy.sqlite3"), nobody.stderr)
        let portZero = try ServerProcess.run(["backup", "--config", stopped.configURL.path, "--to", "x"])
        XCTAssertEqual(portZero.status, 2, portZero.stderr)
        XCTAssertTrue(portZero.stderr.contains("--port"), portZero.stderr)
    }

    func testHelpTextsNameTheCommands() throws {
        let top = try ServerProcess.run(["--help"])
        XCTAssertTrue(top.stdout.contains("happyserver backup --to PATH"), top.stdout)
        XCTAssertTrue(top.stdout.contains("happyserver restore --from PATH"), top.stdout)
        for command in ["backup", "restore"] {
            let help = try ServerProcess.run([command, "--help"])
            XCTAssertEqual(help.status, 0)
            XCTAssertTrue(help.stdout.contains("usage: happyserver \(command)"), help.stdout)
            XCTAssertTrue(help.stdout.contains("exit status"), help.stdout)
            let missing = try ServerProcess.run([command])
            XCTAssertEqual(missing.status, 2, missing.stderr)
            XCTAssertTrue(missing.stderr.contains(command == "backup" ? "--to PATH is required" : "--from PATH is required"),
                          missing.stderr)
        }
    }
}
