import Foundation
import HappyCore
import HappySQLite
import XCTest

/// `happyserver backup` on a server that 100 clients keep writing to, then
/// `happyserver restore` into a fresh server: the rooms come back as the
/// backup's seq left them, their history intact (docs/operations.md, Backups).
final class BackupRestoreTests: XCTestCase {
    static let clientCount = 100
    static let roomCount = 10
    static let writerThreads = 4
    /// Every client sends one intent a round, and waits for its answer:
    /// about 20 rounds a second, the rooms never still for long.
    static let pauseBetweenRounds = 0.05

    /// Plenty of HTTP and new rooms for one address: every client is on loopback.
    static var settings: [String: Any] {
        ["limits": ["httpPerSecond": 10_000, "httpBurst": 10_000, "roomsPerAddress": 1000, "intentsPerSecond": 200,
                    "intentBurst": 400]]
    }

    func testABackupTakenWhile100ClientsWriteRestoresIntoAFreshServer() throws {
        let original = try ServerProcess(Self.settings)
        let rooms = (0..<Self.roomCount).map { "vault-\($0)" }
        var clients: [TestClient] = []
        for index in 0..<Self.clientCount {
            clients.append(try TestClient.join(original, room: rooms[index % Self.roomCount], name: "w\(index)").0)
        }
        let writers = Writers(clients: clients, threads: Self.writerThreads, pause: Self.pauseBetweenRounds)
        writers.start()
        defer { writers.stop() }

        try eventually(seconds: 60) { try seqs(of: original).values.min().map { $0 >= 100 } == true ? () : nil }
        let before = try seqs(of: original)
        let backupFile = original.directory.appendingPathComponent("taken-while-writing.sqlite3").path
        let backup = try ServerProcess.run(["backup", "--config", original.configURL.path, "--port", "\(original.port)",
                                            "--to", backupFile], timeout: 60)
        let after = try seqs(of: original)
        XCTAssertEqual(backup.status, 0, backup.stderr)
        XCTAssertGreaterThan(after.values.reduce(0, +), before.values.reduce(0, +), "writes went on during the backup")
        XCTAssertTrue(backup.stdout.contains("integrity ok"), backup.stdout)
        // The writes go on: every room moves on well past the backup.
        try eventually(seconds: 60) {
            let now = try seqs(of: original)
            return rooms.allSatisfy { now[$0, default: 0] >= after[$0, default: 0] + 20 } ? () : nil
        }
        writers.stop()
        XCTAssertEqual(writers.unanswered, 0, "every intent was answered while the backup was taken")
        XCTAssertGreaterThan(writers.acks, 0)
        for client in clients { client.close() }
        let final = try seqs(of: original)

        let fresh = try ServerProcess(Self.settings, start: false)
        let restore = try ServerProcess.run(["restore", "--config", fresh.configURL.path, "--from", backupFile])
        XCTAssertEqual(restore.status, 0, restore.stderr)
        let database = fresh.dataDirectory.appendingPathComponent(SQLiteRoomStore.fileName).path
        let facts = try SQLiteBackup.check(database)  // PRAGMA integrity_check: ok
        XCTAssertEqual(facts.rooms, Self.roomCount)
        XCTAssertEqual(facts.schema, "3")
        try fresh.start()

        for room in rooms {
            let restored = try XCTUnwrap(HTTP.get("\(fresh.httpBase)/api/state?room=\(room)").json, room)
            let seq = try XCTUnwrap(restored["seq"]?.intValue, room)
            XCTAssertGreaterThanOrEqual(seq, before[room, default: 0], "\(room): taken after the command started")
            XCTAssertLessThanOrEqual(seq, after[room, default: 0], "\(room): taken before it ended")
            XCTAssertLessThan(seq, final[room, default: 0], "\(room): the original moved on after it")
            let then = try XCTUnwrap(HTTP.get("\(original.httpBase)/api/state?room=\(room)&seq=\(seq)").json, room)
            XCTAssertJSONEqual(restored["state"], try XCTUnwrap(then["state"]), "\(room) at seq \(seq)")
            let past = try XCTUnwrap(HTTP.get("\(fresh.httpBase)/api/state?room=\(room)&seq=\(seq)").json, room)
            XCTAssertEqual(past["dragonStatus"]?.stringValue, then["dragonStatus"]?.stringValue, room)
            XCTAssertNotEqual(restored["epoch"]?.stringValue, then["epoch"]?.stringValue,
                              "\(room): a new epoch, so the seqs after the backup are not taken for the lost ones")

            let restoredHistory = try eventPages(fresh, room: room, through: seq)
            XCTAssertEqual(restoredHistory, try eventPages(original, room: room, through: seq),
                           "\(room): every event up to \(seq), byte for byte")
            XCTAssertEqual(restoredHistory.joined().components(separatedBy: #"{"type":"event""#).count - 1, seq, room)
        }
    }

    /// Each room's seq, as the operator API lists the rooms in memory.
    private func seqs(of server: ServerProcess) throws -> [String: Int] {
        let answer = try HTTP.get("\(server.httpBase)/api/rooms?limit=1000", headers: server.operatorHeaders)
        var seqs: [String: Int] = [:]
        for room in answer.json?["rooms"]?.arrayValue ?? [] {
            if let name = room["room"]?.stringValue, let seq = room["seq"]?.intValue { seqs[name] = seq }
        }
        return seqs
    }

    /// A room's events from the first through `seq`, as `/api/history` sends
    /// them: each page's text from its `"events"` on (the rest names the
    /// room's epoch and current seq).
    private func eventPages(_ server: ServerProcess, room: String, through seq: Int) throws -> [String] {
        var pages: [String] = []
        var since = 0
        while since < seq {
            let limit = min(1000, seq - since)
            let text = try HTTP.get("\(server.httpBase)/api/history?room=\(room)&since=\(since)&limit=\(limit)").text
            XCTAssertTrue(text.contains(#""first":1,"#), "\(room) holds its whole history: \(text.prefix(120))")
            let events = try XCTUnwrap(text.range(of: #""events":"#), text)
            pages.append(String(text[events.lowerBound...]))
            since += limit
        }
        return pages
    }
}

/// Clients that each send an intent a round and wait for its answer, on a
/// few threads, until stopped.
private final class Writers: @unchecked Sendable {
    private let clients: [TestClient]
    private let threads: Int
    private let pause: Double
    private let lock = NSLock()
    private var running = true
    private var answered = 0
    private var missing = 0
    private let group = DispatchGroup()
    private var started = false

    init(clients: [TestClient], threads: Int, pause: Double) {
        self.clients = clients
        self.threads = threads
        self.pause = pause
    }

    var acks: Int { lock.withLock { answered } }
    var unanswered: Int { lock.withLock { missing } }
    private var isRunning: Bool { lock.withLock { running } }

    func start() {
        started = true
        for thread in 0..<threads {
            let mine = UncheckedSendable(stride(from: thread, to: clients.count, by: threads).map { clients[$0] })
            group.enter()
            Thread { [self] in
                write(mine.value)
                group.leave()
            }.start()
        }
    }

    /// Stops every thread after its round and waits for them.
    func stop() {
        lock.withLock { running = false }
        if started { group.wait() }
        started = false
    }

    private func write(_ mine: [TestClient]) {
        var round = 0
        while isRunning {
            round += 1
            for (index, client) in mine.enumerated() {
                client.intent(Self.action(round: round, index: index).0, id: "r\(round)",
                              Self.action(round: round, index: index).1)
            }
            for client in mine {
                let ok = awaitAnswer(client, id: "r\(round)")
                lock.withLock { if ok { answered += 1 } else { missing += 1 } }
            }
            Thread.sleep(forTimeInterval: pause)
        }
    }

    /// Reads the client's messages (events of the room, dropped) up to the
    /// answer to `id`.
    private func awaitAnswer(_ client: TestClient, id: String) -> Bool {
        let deadline = Date(timeIntervalSinceNow: 20)
        while Date() < deadline, let message = client.next(timeout: deadline.timeIntervalSinceNow) {
            let type = message["type"]?.stringValue
            if (type == "ack" || type == "error"), message["id"]?.stringValue == id { return true }
        }
        return false
    }

    /// A different change each round, so that every event moves the scene.
    private static func action(round: Int, index: Int) -> (String, [String: Any]) {
        switch (round + index) % 4 {
        case 0: return ("face.setHappiness", ["value": (round * 7 + index) % 101])
        case 1: return ("dragon.forward", [:])
        case 2: return ("heart.setRate", ["value": Double((round + index) % 11) / 10])
        default: return ("dragon.back", [:])
        }
    }
}
