import HappyCore
@testable import HappyServer
import XCTest

/// Admission into a room (PROTOCOL.md section 2): the welcome, refusals
/// with their close codes, tokens and roles, presence, early messages.
final class AdmissionTests: XCTestCase {
    func testWelcomeNamesTheRoomAndTheClientFromTheQuery() {
        let test = TestServer()
        let client = test.connect(room: "garden", name: "alice")
        let messages = test.messages(of: client)

        XCTAssertEqual(messages.count, 1)
        let welcome = messages[0]
        XCTAssertEqual(welcome["type"]?.stringValue, "welcome")
        XCTAssertEqual(welcome["room"]?.stringValue, "garden")
        XCTAssertEqual(welcome["you"]?["name"]?.stringValue, "alice")
        XCTAssertEqual(welcome["you"]?["id"]?.stringValue, client.id)
        XCTAssertEqual(welcome["you"]?["role"]?.stringValue, "player")
        XCTAssertEqual(welcome["seq"]?.intValue, 0)
        XCTAssertEqual(welcome["presenceCount"]?.intValue, 1)
        XCTAssertEqual(welcome["serverTime"]?.intValue, Int(test.time.wallMilliseconds))
        XCTAssertEqual(welcome["recovered"]?.boolValue, false)
        XCTAssertEqual(test.server.directory["garden"]?.members.count, 1)
        XCTAssertTrue(client.connection.joined)
    }

    func testWelcomeUsesTheDefaultRoomAndAGuestName() {
        let test = TestServer(config: TestServer.config { $0.defaultRoom = "hall" })
        let client = test.connect()
        let welcome = test.messages(of: client).first

        XCTAssertEqual(welcome?["room"]?.stringValue, "hall")
        XCTAssertEqual(welcome?["you"]?["name"]?.stringValue, "guest-\(client.id)")
        XCTAssertEqual(welcome?["limits"]?["intentBurst"]?.intValue, test.config.limits.intentBurst)
    }

    func testSecondClientSeesTheFirstInItsWelcomePresence() {
        let test = TestServer()
        let alice = test.joined(name: "alice")
        let bob = test.connect(name: "bob")
        let welcome = test.messages(of: bob).first

        XCTAssertEqual(welcome?["presenceCount"]?.intValue, 2)
        let names = welcome?["presence"]?.arrayValue?.compactMap { $0["name"]?.stringValue }
        XCTAssertEqual(names.map(Set.init), ["alice", "bob"])
        XCTAssertNotEqual(alice.id, bob.id)
    }

    func testInvalidRoomNameIsRefusedWithPolicyViolation() {
        let test = TestServer()
        let client = test.connect(room: "no spaces/allowed")
        test.pump(client)

        XCTAssertEqual(client.closeFrame?.closeCode, 1008)
        XCTAssertEqual(client.closeFrame?.closeReason, "invalid room name: use 1-64 characters of A-Z a-z 0-9 _ -")
        XCTAssertTrue(client.transport.textFrames.isEmpty, "no welcome before the close")
        XCTAssertEqual(test.metrics.connectionsRefused["room"], 1)
        XCTAssertFalse(client.connection.membership.admitted)
    }

    func testInvalidDisplayNameIsRefusedWithPolicyViolation() {
        let test = TestServer()
        let client = test.connect(name: String(repeating: "n", count: 33))
        test.pump(client)

        XCTAssertEqual(client.closeFrame?.closeCode, 1008)
        XCTAssertEqual(client.closeFrame?.closeReason, "invalid name: use 1-32 printable characters")
        XCTAssertEqual(test.metrics.connectionsRefused["name"], 1)
    }

    func testMaxClientsRefusesWithTryAgainLater() {
        let test = TestServer(config: TestServer.config { $0.limits.maxClients = 2 })
        _ = test.joined()
        let second = test.joined()
        let third = test.connect()
        test.pump(third)

        XCTAssertEqual(third.closeFrame?.closeCode, 1013)
        XCTAssertEqual(third.closeFrame?.closeReason, "server full: 2 clients connected")
        XCTAssertEqual(test.metrics.connectionsRefused["maxClients"], 1)

        // A seat that frees up can be taken again.
        test.close(second)
        XCTAssertEqual(test.messages(of: test.connect()).first?["type"]?.stringValue, "welcome")
    }

    func testMaxRoomsRefusesANewRoomButNotAnOccupiedOne() {
        let test = TestServer(config: TestServer.config { $0.limits.maxRooms = 1 })
        _ = test.joined(room: "one")
        let refused = test.connect(room: "two")
        test.pump(refused)

        XCTAssertEqual(refused.closeFrame?.closeCode, 1013)
        XCTAssertEqual(refused.closeFrame?.closeReason, "too many rooms in use: 1")
        XCTAssertEqual(test.metrics.connectionsRefused["maxRooms"], 1)
        _ = test.joined(room: "one")
    }

    func testTokenAdmitsWithItsSubjectAndRole() {
        let test = TestTokens.server()
        let token = TestTokens.mint("quinn", role: .admin)
        let client = test.connect(name: "ignored", token: token)
        let welcome = test.messages(of: client).first

        XCTAssertEqual(welcome?["type"]?.stringValue, "welcome")
        XCTAssertEqual(welcome?["you"]?["name"]?.stringValue, "quinn", "the token's subject wins over name=")
        XCTAssertEqual(welcome?["you"]?["role"]?.stringValue, "admin")
    }

    func testMissingTokenIsRefused() {
        let test = TestTokens.server()
        let client = test.connect()
        test.pump(client)

        XCTAssertEqual(client.closeFrame?.closeCode, 1008)
        XCTAssertEqual(client.closeFrame?.closeReason,
                       "an access token is required (query token= or Authorization: Bearer)")
        XCTAssertEqual(test.metrics.connectionsRefused["token"], 1)
    }

    func testTokenSignedWithAnotherSecretIsRefused() {
        let test = TestTokens.server()
        let forged = HMACSHA256.verifier(secret: "not-the-secret").mint(AccessClaims(subject: "mallory", role: .admin))
        let client = test.connect(token: forged)
        test.pump(client)

        XCTAssertEqual(client.closeFrame?.closeCode, 1008)
        XCTAssertEqual(client.closeFrame?.closeReason, "invalid token: token signature does not match")
    }

    func testExpiredTokenIsRefusedByTheInjectedClock() {
        let test = TestTokens.server()
        let expiresAt = test.time.wallMilliseconds / 1000 + 60
        let token = TestTokens.mint("quinn", role: .player, expiresAt: expiresAt)
        XCTAssertEqual(test.messages(of: test.connect(token: token)).first?["type"]?.stringValue, "welcome")

        test.advance(by: 60 + 31)  // past exp and its leeway
        let late = test.connect(token: token)
        test.pump(late)
        XCTAssertEqual(late.closeFrame?.closeReason, "invalid token: token has expired")
    }

    func testTokenForAnotherRoomIsRefused() {
        let test = TestTokens.server()
        let token = TestTokens.mint("quinn", role: .player, room: "q")
        let elsewhere = test.connect(room: "lobby", token: token)
        test.pump(elsewhere)

        XCTAssertEqual(elsewhere.closeFrame?.closeCode, 1008)
        XCTAssertEqual(elsewhere.closeFrame?.closeReason, "the token does not allow room lobby")
        XCTAssertEqual(test.messages(of: test.connect(room: "q", token: token)).first?["room"]?.stringValue, "q")
    }

    func testViewerIntentsAreForbidden() {
        let test = TestTokens.server()
        let viewer = test.joined(token: TestTokens.mint("vera", role: .viewer))
        test.sendIntent(viewer, "face.setHappiness", id: "v1", #""value":80"#)
        let answers = test.messages(of: viewer)

        XCTAssertEqual(answers.count, 1)
        XCTAssertEqual(answers.first?["type"]?.stringValue, "error")
        XCTAssertEqual(answers.first?["code"]?.stringValue, "forbidden")
        XCTAssertEqual(answers.first?["id"]?.stringValue, "v1")
        XCTAssertEqual(answers.first?["message"]?.stringValue, "viewers may not send intents")
        XCTAssertEqual(test.server.directory["lobby"]?.room?.committed.seq, 0, "nothing was applied")
        XCTAssertEqual(test.metrics.intentErrors["forbidden"], 1)
    }

    func testResetNeedsTheAdminRoleWhenTokensAreRequired() {
        let test = TestTokens.server()
        let player = test.joined(token: TestTokens.mint("pat", role: .player))
        test.sendIntent(player, "room.reset", id: "r1")
        XCTAssertEqual(test.messages(of: player).first?["message"]?.stringValue, "room.reset needs the admin role")

        let admin = test.joined(token: TestTokens.mint("ada", role: .admin))
        test.sendIntent(admin, "room.reset", id: "r2")
        XCTAssertEqual(test.messages(of: admin).ofType("ack").first?["id"]?.stringValue, "r2")
    }

    func testShutdownRefusesNewConnectionsWithGoingAway() {
        let test = TestServer()
        test.server.beginShutdown(signal: 0)
        let client = test.connect()
        test.pump(client)

        XCTAssertEqual(client.closeFrame?.closeCode, 1001)
        XCTAssertEqual(client.closeFrame?.closeReason, "server shutting down")
        XCTAssertEqual(test.metrics.connectionsRefused["shutdown"], 1)
    }

    func testPresenceIsBroadcastToTheOthersOnJoinAndLeave() {
        let test = TestServer()
        let alice = test.joined(name: "alice")
        let bob = test.joined(name: "bob")

        let joined = test.messages(of: alice)
        XCTAssertEqual(joined.count, 1)
        XCTAssertEqual(joined.first?["type"]?.stringValue, "presence")
        XCTAssertEqual(joined.first?["joined"]?["id"]?.stringValue, bob.id)
        XCTAssertEqual(joined.first?["joined"]?["name"]?.stringValue, "bob")
        XCTAssertTrue(test.messages(of: bob).isEmpty, "the newcomer does not hear of itself")

        test.close(bob)
        let left = test.messages(of: alice)
        XCTAssertEqual(left.first?["left"]?["id"]?.stringValue, bob.id)
        XCTAssertEqual(test.server.directory["lobby"]?.members.count, 1)
        XCTAssertEqual(test.metrics.connectionsClosed, 1)
    }

    func testMessagesBeforeTheWelcomeAreHandledAfterIt() {
        let store = ScriptedStore(synchronous: false)
        let test = TestServer(store: store)
        let client = test.connect(room: "slow")
        // The room is still loading on the store thread: nothing is welcomed yet.
        test.send(client, #"{"type":"ping","id":"early-1"}"#)
        test.send(client, #"{"type":"ping","id":"early-2"}"#)
        XCTAssertTrue(test.messages(of: client).isEmpty)
        XCTAssertEqual(client.connection.intake.early.count, 2)

        var received: [JSONValue] = []
        test.waitUntil("the welcome and the pongs") {
            received += test.messages(of: client)
            return received.count >= 3
        }
        XCTAssertEqual(received.map { $0["type"]?.stringValue }, ["welcome", "pong", "pong"])
        XCTAssertEqual(received.dropFirst().map { $0["id"]?.stringValue }, ["early-1", "early-2"])
        XCTAssertTrue(client.connection.intake.early.isEmpty)
    }

    func testTooManyMessagesBeforeTheWelcomeClose() {
        let test = TestServer(store: ScriptedStore(synchronous: false))
        let client = test.connect(room: "slow")
        for index in 0...IntakeState.maxEarlyMessages {
            test.send(client, #"{"type":"ping","id":"\#(index)"}"#)
        }
        test.pump(client)

        XCTAssertEqual(client.closeFrame?.closeCode, 1008)
        XCTAssertEqual(client.closeFrame?.closeReason, "too many messages before the welcome")
        XCTAssertEqual(client.connection.intake.early.count, IntakeState.maxEarlyMessages)
    }
}
