import Foundation
import HappyClientKit
import HappyCore
import XCTest

/// The clients' side of the operator API (PROTOCOL.md section 13) on a live
/// server: a HappySession and happyclient stop for good after 4003 and 4004
/// and say why; `happyclient rooms`, `room`, `kick` and `delete-room` as
/// processes; read-only commands observe and acting ones go by the login name.
final class OperatorClientTests: XCTestCase {
    private var server: ServerProcess!
    /// With `auth.secret` the operator key is not a credential: commands carry their own `--token`.
    private var usesSecret = false

    override func setUpWithError() throws {
        server = try ServerProcess()
    }

    override func tearDown() {
        server = nil
    }

    private var url: String { "ws://127.0.0.1:\(server.port)" }

    /// Runs `happyclient --url … arguments` to its end, with the operator key (`HAPPY_TOKEN`) when it is the credential.
    private func client(_ arguments: [String], environment: [String: String] = [:]) throws -> ClientProcess.Outcome {
        let key = usesSecret ? "" : server.operatorKey
        let credential = key.isEmpty ? [:] : ["HAPPY_TOKEN": key]
        return try ClientProcess.run(["--url", url] + arguments, environment: credential.merging(environment) { $1 })
    }

    private func connections(_ room: String) throws -> [JSONValue] {
        let answer = try HTTP.get("\(server.httpBase)/api/rooms/\(room)", headers: server.operatorHeaders)
        if answer.status == 404 { return [] }
        return answer.json?["connections"]?.arrayValue ?? []
    }

    // MARK: HappyClientKit

    /// A session that reconnects would be back within 0.1 s (its backoff);
    /// kicked, it ends with the operator's words instead and stays away.
    func testAKickedSessionEndsWithTheOperatorsReasonAndDoesNotReconnect() throws {
        let (session, states) = try joinedSession(room: "hall", name: "alice")
        defer { session.stop(wait: 0) }
        let kick = try HTTP.post("\(server.httpBase)/api/rooms/hall/kick", body: #"{"name":"alice","reason":"testing"}"#,
                                 headers: server.operatorHeaders)
        XCTAssertEqual(kick.json?["kicked"]?.doubleValue, 1)

        let ended = try eventually(seconds: 5) { states.ended }
        XCTAssertEqual(ended, .removed(url: session.configuration.displayURL,
                                       CloseReason(code: 4003, reason: "removed from the room by an operator: testing")))
        XCTAssertEqual(ended.description, "removed from the room by an operator: testing (close 4003)")
        try assertStaysAway(session, states, room: "hall")
    }

    func testADeletedRoomEndsTheSessionWith4004AndItDoesNotReconnect() throws {
        let (session, states) = try joinedSession(room: "gone", name: "bob")
        defer { session.stop(wait: 0) }
        XCTAssertEqual(try HTTP.request("DELETE", "\(server.httpBase)/api/rooms/gone", body: nil,
                                        headers: server.operatorHeaders).status, 200)

        let ended = try eventually(seconds: 5) { states.ended }
        XCTAssertEqual(ended.description, "the room was deleted by an operator (close 4004)")
        guard case .removed(_, let close) = ended else { return XCTFail("\(ended)") }
        XCTAssertEqual(close.code, 4004)
        try assertStaysAway(session, states, room: "gone")
    }

    private func joinedSession(room: String, name: String) throws -> (HappySession, StateRecorder) {
        let configuration = SessionConfiguration(server: WebSocketURL(url)!, room: room, name: name, reconnects: true,
                                                 backoff: Backoff(initial: 0.05, maximum: 0.1))
        let session = HappySession(configuration: configuration, loop: sharedClientLoop)
        let states = StateRecorder()
        session.delegate = states
        try session.waitForWelcome(timeout: 5)
        return (session, states)
    }

    /// Ten times the backoff's longest wait without a new connection, and no wait for one was ever planned.
    private func assertStaysAway(_ session: HappySession, _ states: StateRecorder, room: String,
                                 file: StaticString = #filePath, line: UInt = #line) throws {
        let until = Date(timeIntervalSinceNow: 1)
        while Date() < until {
            XCTAssertEqual(try connections(room).count, 0, "the session came back", file: file, line: line)
            Thread.sleep(forTimeInterval: 0.05)
        }
        XCTAssertFalse(states.all.contains { if case .waiting = $0 { return true } else { return false } },
                       "\(states.all)", file: file, line: line)
        XCTAssertEqual(states.all.filter { $0 == .connecting(attempt: 0) }.count, 1, "\(states.all)", file: file, line: line)
    }

    // MARK: happyclient's operator commands

    func testRoomsListsThePagesAndRoomShowsTheConnections() throws {
        let (alice, _) = try TestClient.join(server, room: "alpha", name: "alice")
        let (bob, _) = try TestClient.join(server, room: "beta", name: "bob")
        let watch = try ClientProcess(["--url", url, "--room", "beta", "--name", "dash", "watch"])
        XCTAssertTrue(watch.waitForOutput { _, err in err.contains("watching room beta") }, watch.stderr)
        alice.intent("dragon.forward", id: "f")
        XCTAssertNotNil(alice.next(type: "ack"))
        defer { withExtendedLifetime((alice, bob)) {} }

        let rooms = try client(["rooms"])
        XCTAssertEqual(rooms.status, 0, rooms.stderr)
        XCTAssertEqual(rooms.lines.count, 3, rooms.stdout)
        XCTAssertEqual(rooms.lines[0], "ROOM   PEOPLE  OBSERVERS  SEQ  DELIVERY  LAST EVENT")
        XCTAssertTrue(rooms.lines[1].hasPrefix("alpha       1          0    1  each      "), rooms.stdout)
        XCTAssertTrue(rooms.lines[1].hasSuffix(" s ago"), rooms.stdout)
        XCTAssertEqual(rooms.lines[2], "beta        1          1    0  each      none")
        XCTAssertEqual(rooms.stderr, "")

        let first = try client(["rooms", "--limit", "1"])
        XCTAssertEqual(first.lines.dropFirst().map { $0.prefix(5) }, ["alpha"])
        XCTAssertEqual(first.stderr, "happyclient: more rooms after alpha: happyclient rooms --after alpha (or --all)\n")
        let second = try client(["rooms", "--limit", "1", "--after", "alpha"])
        XCTAssertEqual(second.lines.dropFirst().map { $0.prefix(4) }, ["beta"])
        XCTAssertEqual(second.stderr, "")
        let all = try client(["rooms", "--limit", "1", "--all", "--json"])
        XCTAssertEqual(all.lines.map { JSONValue.parse($0)["room"]?.stringValue }, ["alpha", "beta"])
        XCTAssertEqual(all.lines.map { JSONValue.parse($0)["observers"]?.intValue }, [0, 1])

        let beta = try client(["room", "beta"])
        XCTAssertEqual(beta.status, 0, beta.stderr)
        XCTAssertTrue(beta.lines[0].hasPrefix("room     beta   seq 0   epoch "), beta.stdout)
        XCTAssertEqual(beta.lines[1], "here     1 person, 1 observer")
        XCTAssertTrue(beta.lines[2].hasPrefix("ID  NAME  KIND      ROLE    ADDRESS    CONNECTED  QUEUED  RESYNCS  RATE-LIMITED"),
                      beta.stdout)
        let rows = beta.lines.dropFirst(3).map { $0.split(separator: " ").map(String.init) }
        XCTAssertEqual(rows.map { Array($0[1...4]) }.sorted { $0[0] < $1[0] },
                       [["bob", "person", "player", "127.0.0.1"], ["dash", "observer", "player", "127.0.0.1"]])
        XCTAssertEqual(rows.map { Array($0.suffix(4)) }, [["0", "B", "0", "0"], ["0", "B", "0", "0"]], beta.stdout)

        let json = try client(["room", "beta", "--json"])
        XCTAssertEqual(json.lines.count, 1)
        XCTAssertEqual(JSONValue.parse(json.stdout)["connections"]?.arrayValue?.count, 2)

        let missing = try client(["room", "nosuch"])
        XCTAssertEqual(missing.status, 65)
        XCTAssertEqual(missing.stderr, "happyclient: refused by the server: not_found: no room nosuch in memory on this server\n")
        watch.signal(SIGINT)
        XCTAssertEqual(watch.finish().status, 130)
    }

    /// The kicked watch stops with the reason, without a line about reconnecting.
    func testKickByIdEndsAWatchWithTheReasonAndKickByNameRemovesEveryoneOfThatName() throws {
        let watch = try ClientProcess(["--url", url, "--room", "gamma", "--name", "dash", "watch"])
        XCTAssertTrue(watch.waitForOutput { _, err in err.contains("watching room gamma") }, watch.stderr)
        let (eve1, _) = try TestClient.join(server, room: "gamma", name: "eve")
        let (eve2, _) = try TestClient.join(server, room: "gamma", name: "eve")
        let dash = try XCTUnwrap(try connections("gamma").first { $0["name"]?.stringValue == "dash" }?["id"]?.stringValue)

        let byID = try client(["kick", "gamma", "--id", dash, "--reason", "enough watching"])
        XCTAssertEqual(byID.status, 0, byID.stderr)
        XCTAssertEqual(byID.stdout, "kicked 1 connection (id \(dash)) from room gamma\n")
        let ended = watch.finish(timeout: 10)
        XCTAssertEqual(ended.status, 65, ended.stderr)
        XCTAssertTrue(ended.stderr.hasSuffix("happyclient: removed from the room by an operator: enough watching (close 4003)\n"),
                      ended.stderr)
        XCTAssertFalse(ended.stderr.contains("retrying") || ended.stderr.contains("reconnecting"), ended.stderr)

        let byName = try client(["kick", "gamma", "--name", "eve"])
        XCTAssertEqual(byName.stdout, "kicked 2 connections (named eve) from room gamma\n")
        for eve in [eve1, eve2] {
            XCTAssertEqual(eve.waitForClose(timeout: 5), .some(4003))
            XCTAssertEqual(eve.closeReason, "removed from the room by an operator")
        }
        let nobody = try client(["kick", "gamma", "--name", "eve"])
        XCTAssertEqual(nobody.status, 0)
        XCTAssertEqual(nobody.stdout, "nobody to kick: no connection named eve in room gamma\n")
    }

    func testDeleteRoomNeedsYesThenEndsAWatchWith4004AndErasesTheHistory() throws {
        let watch = try ClientProcess(["--url", url, "--room", "delta", "watch"])
        XCTAssertTrue(watch.waitForOutput { _, err in err.contains("watching room delta") }, watch.stderr)
        XCTAssertEqual(try client(["--room", "delta", "dragon", "forward"]).status, 0)
        XCTAssertTrue(watch.waitForOutput { out, _ in out.contains("forwardButtonClicked:") }, watch.stdout)

        let unconfirmed = try client(["delete-room", "delta"])
        XCTAssertEqual(unconfirmed.status, 64)
        XCTAssertTrue(unconfirmed.stderr.hasPrefix("happyclient: delete-room: this closes every connection of room delta "
                                                   + "and erases its state and history for good; add --yes to do it\n"),
                      unconfirmed.stderr)
        XCTAssertTrue(watch.isRunning, "nothing was sent")

        let deleted = try client(["delete-room", "delta", "--yes"])
        XCTAssertEqual(deleted.status, 0, deleted.stderr)
        XCTAssertEqual(deleted.stdout, "deleted room delta: 1 connection closed; it starts again at seq 0 with a new epoch\n")
        let ended = watch.finish(timeout: 10)
        XCTAssertEqual(ended.status, 65)
        XCTAssertTrue(ended.stderr.hasSuffix("happyclient: the room was deleted by an operator (close 4004)\n"), ended.stderr)
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/history?room=delta").json?["seq"]?.doubleValue, 0)
    }

    func testWithASecretTheOperatorCommandsNeedAnAdminToken() throws {
        let secret = "operator-client-secret"
        server = try ServerProcess(["auth": ["secret": secret]])
        usesSecret = true
        func token(_ role: String) throws -> String {
            let minted = try ServerProcess.run(["token", "--secret", secret, "--sub", "ops", "--role", role])
            return minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let none = try client(["rooms"])
        XCTAssertEqual(none.status, 65)
        XCTAssertEqual(none.stderr, "happyclient: refused by the server: unauthorized: the operator API needs an admin token "
                       + "in Authorization: Bearer; make one with happyserver token --role admin\n")
        let key = try client(["--token", server.operatorKey, "rooms"])
        XCTAssertEqual(key.stderr, "happyclient: refused by the server: unauthorized: the operator key is no credential "
                       + "while auth.secret is set: send an admin token in Authorization: Bearer; make one with "
                       + "happyserver token --role admin\n")
        let player = try client(["--token", token("player"), "kick", "lobby", "--name", "x"])
        XCTAssertEqual(player.status, 65)
        XCTAssertEqual(player.stderr, "happyclient: refused by the server: forbidden: the operator API needs the admin role\n")
        let admin = try client(["--token", token("admin"), "rooms"])
        XCTAssertEqual(admin.status, 0, admin.stderr)
        XCTAssertEqual(admin.stderr, "happyclient: no rooms in memory on this server\n")
    }

    // MARK: read-only commands observe; acting ones go by the login name (issue 26, point 7)

    /// Before, each `state` joined and left (two presence messages) and a
    /// `watch` was one of the people.
    func testStateWatchAndPingObserveSoTheRoomNeverHearsOfThem() throws {
        let (alice, welcome) = try TestClient.join(server, room: "quiet", name: "alice")
        let aliceID = try XCTUnwrap(welcome["you"]?["id"]?.stringValue)
        for _ in 1...3 {
            let state = try client(["--room", "quiet", "state"])
            XCTAssertEqual(state.status, 0, state.stderr)
            XCTAssertTrue(state.stdout.contains("here     1 person: alice (\(aliceID))"), state.stdout)
        }
        XCTAssertEqual(try client(["--room", "quiet", "ping", "--count", "1"]).status, 0)
        let watch = try ClientProcess(["--url", url, "--room", "quiet", "watch"])
        XCTAssertTrue(watch.waitForOutput { _, err in err.contains("watching room quiet at \(self.url)/ws (seq 0, 1 person here)") },
                      watch.stderr)

        let listed = try connections("quiet")
        XCTAssertEqual(listed.count, 2)
        XCTAssertEqual(listed.filter { $0["observer"]?.boolValue == true }.count, 1, "the watch observes")
        let messages = try XCTUnwrap(alice.drainUntilPong())
        XCTAssertEqual(messages.filter { $0["type"]?.stringValue == "presence" }.map { String(describing: $0) }, [],
                       "nobody joined or left as far as the room can tell")
        let (late, lateWelcome) = try TestClient.join(server, room: "quiet", name: "late")
        XCTAssertEqual(lateWelcome["presence"]?.arrayValue?.compactMap { $0["name"]?.stringValue }.sorted(), ["alice", "late"])
        XCTAssertEqual(lateWelcome["observerCount"]?.intValue, 1)
        late.close()
        watch.signal(SIGINT)
        XCTAssertEqual(watch.finish().status, 130)
    }

    /// Before, a command without --name was `guest-<id>` to everyone.
    func testCommandsThatActGoByTheLoginNameUnlessNamed() throws {
        let (observer, _) = try TestClient.join(server, room: "named", name: "observer")
        for (arguments, environment, expected) in [
            (["happiness", "61"], ["USER": "carol", "LOGNAME": "nobody"], "carol"),
            (["happiness", "62"], ["USER": "", "LOGNAME": "dave"], "dave"),
            (["--name", "erin", "happiness", "63"], ["USER": "carol"], "erin"),
            (["happiness", "64"], ["USER": "carol", "HAPPY_NAME": "frank"], "frank"),
        ] {
            let outcome = try client(["--room", "named"] + arguments, environment: environment)
            XCTAssertEqual(outcome.status, 0, outcome.stderr)
            XCTAssertEqual(observer.next(type: "event")?["sender"]?["name"]?.stringValue, expected, "\(arguments) \(environment)")
        }
    }
}

/// The connection states a session went through, in order.
private final class StateRecorder: HappySessionDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var states: [ConnectionState] = []

    var all: [ConnectionState] { lock.withLock { states } }

    /// The error the session ended with, once it did.
    var ended: SessionError? {
        for state in all { if case .ended(let error) = state { return error } }
        return nil
    }

    func session(_ session: HappySession, didChange state: ConnectionState) {
        lock.withLock { states.append(state) }
    }
}
