import Foundation
import HappyClientKit
import HappyCore
import XCTest

/// SIGHUP reads the configuration again without dropping anyone; SIGUSR2
/// hands the server over to a new process, or keeps it when the new one
/// cannot start (docs/operations.md, "Reload, restarts and upgrades").
final class ReloadAndUpgradeTests: XCTestCase {
    /// Rewrites the server's config file with `settings` over its test defaults.
    private func rewrite(_ server: ServerProcess, _ settings: [String: Any]) throws {
        var config = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: server.configURL)) as? [String: Any])
        for (key, value) in settings { config[key] = value }
        try JSONSerialization.data(withJSONObject: config, options: [.sortedKeys]).write(to: server.configURL)
    }

    private func mint(_ secret: String, _ subject: String) throws -> String {
        try ServerProcess.run(["token", "--sub", subject, "--role", "player", "--secret", secret]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A raw client's close code, or nil when it got its welcome.
    private func refusal(_ server: ServerProcess, _ target: String) throws -> UInt16? {
        let socket = try RawWebSocket(port: server.port, target: target, timeout: 5)
        let (close, texts) = socket.readUntilClose()
        if texts.contains(where: { $0.contains(#""welcome""#) }) { return nil }
        guard case .close(let code, _)? = close else { return nil }
        return code
    }

    func testSIGHUPChangesALimitAndTheSecretWithoutDroppingAnyone() throws {
        let server = try ServerProcess(["auth": ["secret": "first-secret"], "limits": ["maxClients": 10]])
        let early = try mint("first-secret", "early")
        let (alice, _) = try TestClient.join(server, name: "alice", extra: [("token", early)])
        let (bob, _) = try TestClient.join(server, name: "bob", extra: [("token", try mint("first-secret", "bob"))])

        try rewrite(server, ["auth": ["secret": "second-secret"], "limits": ["maxClients": 2], "port": 1])
        kill(server.pid, SIGHUP)
        _ = try logOnceItHas(server, ["configuration reloaded", "port cannot change while the server runs"])

        XCTAssertEqual(try refusal(server, "/ws?name=third&token=\(try mint("second-secret", "third"))"), 1013,
                       "maxClients 2 now: a third is refused")
        alice.intent("dragon.forward", id: "still")
        XCTAssertEqual(alice.next(type: "ack")?["id"]?.stringValue, "still", "nobody was dropped")
        XCTAssertNotNil(bob.next(type: "event"))
        bob.close()
        XCTAssertNotNil(bob.waitForClose() as Any?)
        XCTAssertEqual(try refusal(server, "/ws?name=late&token=\(early)"), 1008, "a token of the old secret is refused")
        let (carol, _) = try TestClient.join(server, name: "carol", extra: [("token", try mint("second-secret", "carol"))])
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/healthz").status, 200, "still on its old port")
        withExtendedLifetime((alice, carol)) {}
    }

    func testSIGHUPRaisingMaxClientsPastTheDescriptorsOfTheProcessSaysSo() throws {
        let server = try ServerProcess(["limits": ["maxClients": 10]])
        try rewrite(server, ["limits": ["maxClients": 1_000_000]])
        kill(server.pid, SIGHUP)
        let log = try logOnceItHas(server, ["configuration reloaded"])
        XCTAssertTrue(log.contains("limits.maxClients 1000000 wants about 3001024 descriptors"), log)
        XCTAssertTrue(log.contains("restart or upgrade"), log)
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/healthz").status, 200)
    }

    func testSIGHUPAddingAWebhookStartsItsDeliveriesWithoutDroppingAnyone() throws {
        let receiver = try WebhookReceiver(secret: "hook-secret")
        let server = try ServerProcess()
        let (alice, _) = try TestClient.join(server, name: "alice")
        alice.intent("dragon.forward", id: "before")
        XCTAssertEqual(alice.next(type: "ack")?["id"]?.stringValue, "before")

        try rewrite(server, ["webhooks": [["url": receiver.url, "events": ["event", "presence.joined"],
                                           "secret": "hook-secret"]]])
        kill(server.pid, SIGHUP)
        let log = try logOnceItHas(server, ["configuration reloaded unchanged=none", "webhooks changed"])
        XCTAssertFalse(log.contains("cannot change while the server runs"), log)

        alice.intent("dragon.forward", id: "after")
        XCTAssertEqual(alice.next(type: "ack")?["id"]?.stringValue, "after", "nobody was dropped")
        let (bob, _) = try TestClient.join(server, name: "bob")
        let deliveries = try eventually(seconds: 15) { () -> [JSONValue]? in
            let all = receiver.deliveries
            return all.count >= 2 ? all : nil
        }
        XCTAssertEqual(deliveries.compactMap { $0["type"]?.stringValue }, ["event", "presence.joined"],
                       "what happened from the reload on")
        XCTAssertEqual(deliveries[0]["data"]?["seq"]?.intValue, 2)
        XCTAssertEqual(deliveries[1]["data"]?["name"]?.stringValue, "bob")
        XCTAssertEqual(try receiver.badlySigned().count, 0)
        withExtendedLifetime(bob) {}
    }

    func testABrokenConfigurationIsRefusedWholeAndTheRunningOneStays() throws {
        let server = try ServerProcess(["limits": ["maxClients": 1]])
        let (alice, _) = try TestClient.join(server, name: "alice")
        let good = try Data(contentsOf: server.configURL)
        try Data(#"{"limits": {"maxClients": 100}, "nonsense": true"#.utf8).write(to: server.configURL)
        kill(server.pid, SIGHUP)
        _ = try logOnceItHas(server, ["configuration not reloaded; the running one stays"])
        XCTAssertEqual(try refusal(server, "/ws?name=second"), 1013, "maxClients is still 1")
        try good.write(to: server.configURL)
        try rewrite(server, ["limits": ["maxClients": 100, "bogus": 2]])
        kill(server.pid, SIGHUP)
        _ = try logOnceItHas(server, ["limits.bogus"])
        XCTAssertEqual(try refusal(server, "/ws?name=third"), 1013, "a file with an unknown key changes nothing either")
        alice.intent("dragon.forward", id: "fine")
        XCTAssertEqual(alice.next(type: "ack")?["id"]?.stringValue, "fine")
    }

    func testSIGUSR2HandsTheServerToANewProcessAndItsClientsResume() async throws {
        let server = try ServerProcess()
        let room = try await HappyRoom.connect(to: "ws://127.0.0.1:\(server.port)", room: "moving", name: "alice")
        defer { room.leave() }
        let first = try await room.perform(.dragonForward)
        XCTAssertEqual(first.seq, 1)
        let raw = try RawWebSocket(port: server.port, target: "/ws?room=moving&name=raw", timeout: 20)
        _ = raw.nextFrame()
        let old = server.pid

        kill(old, SIGUSR2)
        guard case .close(let code, let reason)? = raw.readUntilClose().close else {
            return XCTFail("no close frame: \(server.logText)")
        }
        XCTAssertEqual(code, 1012)
        XCTAssertEqual(reason, WebSocketCloseCode.serviceRestartReason)
        _ = try logOnceItHas(server, ["upgrade: the new process serves", "stopped"])
        let successor = try eventually(seconds: 10) { server.servingPids().first { $0 != old } }
        XCTAssertNotEqual(successor, old)

        // The kit rejoins at once (no backoff) and resumes where it was: nothing lost, nothing doubled.
        let started = Date()
        let after = try await room.perform(.dragonForward, timeout: 10)
        XCTAssertEqual(after.seq, 2)
        XCTAssertLessThan(Date().timeIntervalSince(started), 3, "rejoined at once")
        XCTAssertEqual(room.snapshot.ledger.deliveredSeq, 2)
        let history = try HTTP.get("\(server.httpBase)/api/history?room=moving").json
        XCTAssertEqual(history?["events"]?.arrayValue?.compactMap { $0["seq"]?.intValue }, [1, 2])
    }

    func testANewProcessThatCannotStartLeavesTheRunningOneServing() throws {
        let server = try ServerProcess()
        let (alice, _) = try TestClient.join(server, name: "alice")
        try Data(#"{"limits": "not an object"}"#.utf8).write(to: server.configURL)
        kill(server.pid, SIGUSR2)
        _ = try logOnceItHas(server, ["upgrade failed", "this process keeps serving"])
        XCTAssertEqual(server.servingPids(), [server.pid], "the new process is gone")
        alice.intent("dragon.forward", id: "still")
        XCTAssertEqual(alice.next(type: "ack")?["id"]?.stringValue, "still", "nobody noticed")
        let (bob, _) = try TestClient.join(server, name: "bob")
        withExtendedLifetime(bob) {}
    }
}
