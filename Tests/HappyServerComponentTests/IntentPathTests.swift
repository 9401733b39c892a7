import HappyCore
@testable import HappyServer
import XCTest

/// One intent's way through the server, end to end and in-process: admitted,
/// sent by `IntentRouter` to the commit path (a dragon vote in a voting room
/// to `VoteCounter` first), recorded, published, and answered by `Replies`
/// over a WebSocket or HTTP; on the manual clock.
final class IntentPathTests: XCTestCase {
    private let diskFull = StoreError(.io, "disk full")

    private func server(_ store: ScriptedStore, _ change: (inout HappyConfig) -> Void = { _ in }) -> TestServer {
        TestServer(config: TestServer.config(change), store: store)
    }

    /// Moves the clock past one tick (a round of votes) and ends the loop turn.
    private func nextTick(_ test: TestServer) {
        test.advance(by: 0.051)
        test.turn()
    }

    private func types(_ messages: [JSONValue]) -> [String] { messages.map { $0["type"]?.stringValue ?? "?" } }

    /// A `POST /api/intent` whose answer may wait (a vote waits for its round).
    private func postIntent(_ test: TestServer, _ body: String) -> TestExchange {
        test.begin("POST", "/api/intent", body: Array(body.utf8))
    }

    func testAWebSocketIntentIsRecordedThenBroadcastThenAcked() {
        let store = ScriptedStore(synchronous: true)
        let test = server(store)
        let sender = test.joined(name: "alice"), watcher = test.joined(name: "bob")
        _ = test.messages(of: sender)
        test.turn()  // the room's creation is recorded
        let commitsBefore = store.commitCalls.count

        test.sendIntent(sender, "face.setHappiness", id: "w1", #""value":60"#)

        XCTAssertEqual(store.commitCalls.count, commitsBefore + 1, "recorded before anyone hears of it")
        XCTAssertEqual(store.commitCalls.last?.first?.seq, 1)
        let toSender = test.messages(of: sender)
        XCTAssertEqual(types(toSender), ["event", "ack"], "the ack follows its event")
        XCTAssertEqual(toSender.last?["id"]?.stringValue, "w1")
        XCTAssertEqual(toSender.last?["seq"]?.intValue, 1)
        XCTAssertEqual(toSender.last?["result"]?.stringValue, "applied")
        XCTAssertEqual(types(test.messages(of: watcher)), ["event"])
        XCTAssertEqual(test.metrics.intents["face.setHappiness|applied"], 1)
        XCTAssertEqual(test.metrics.events, 1)
    }

    func testAnHTTPIntentIsAnsweredWithItsAckAndBroadcast() {
        let store = ScriptedStore(synchronous: true)
        let test = server(store)
        let watcher = test.joined(name: "watcher")

        let post = test.request("POST", "/api/intent", body: #"{"id":"h1","action":"heart.setRate","value":0.25}"#)

        XCTAssertEqual(post.status, 200)
        XCTAssertEqual(post.json?["type"]?.stringValue, "ack")
        XCTAssertEqual(post.json?["id"]?.stringValue, "h1")
        XCTAssertEqual(post.json?["seq"]?.intValue, 1)
        XCTAssertEqual(post.json?["result"]?.stringValue, "applied")
        let event = test.messages(of: watcher).ofType("event").first
        XCTAssertEqual(event?["seq"]?.intValue, 1)
        XCTAssertEqual(event?["sender"]?["id"]?.stringValue, "http")
        XCTAssertEqual(store.stored("lobby")?.seq, 1)
        XCTAssertEqual(test.metrics.intents["heart.setRate|applied"], 1)
    }

    func testVotesOverBothTransportsAreCountedThenEachVoterIsAckedAfterTheRound() {
        let store = ScriptedStore(synchronous: true)
        let test = server(store) { $0.crowd.dragon = .vote }
        let voter = test.joined(name: "voter"), watcher = test.joined(name: "watcher")
        _ = test.messages(of: voter)

        test.sendIntent(voter, "dragon.forward", id: "ws-vote")
        let post = postIntent(test, #"{"id":"http-vote","action":"dragon.forward"}"#)
        test.pump(post)
        XCTAssertNil(post.status, "a vote is answered when its round ends")
        XCTAssertTrue(test.messages(of: voter).isEmpty)
        XCTAssertEqual(store.stored("lobby")?.seq ?? 0, 0, "counted, not applied")
        XCTAssertEqual(test.metrics.votes, 2)

        nextTick(test)
        test.pump(post)

        let toVoter = test.messages(of: voter)
        XCTAssertEqual(types(toVoter), ["event", "ack"])
        XCTAssertEqual(toVoter.first?["votes"]?["forward"]?.intValue, 2)
        XCTAssertEqual(toVoter.first?["sender"], .null)
        XCTAssertEqual(toVoter.last?["id"]?.stringValue, "ws-vote")
        XCTAssertEqual(toVoter.last?["result"]?.stringValue, "counted")
        XCTAssertEqual(toVoter.last?["seq"]?.intValue, 1)
        XCTAssertEqual(post.status, 200)
        XCTAssertEqual(post.json?["id"]?.stringValue, "http-vote", "each voter gets its own intent's id")
        XCTAssertEqual(post.json?["result"]?.stringValue, "counted")
        XCTAssertEqual(post.json?["seq"]?.intValue, 1)
        XCTAssertEqual(types(test.messages(of: watcher)), ["event"])
        XCTAssertEqual(store.stored("lobby")?.seq, 1, "one event for the round")
        XCTAssertEqual(test.metrics.intents["dragon.forward|counted"], 2)
    }

    func testAnIntentTheStoreCannotRecordIsRefusedOverEachTransport() {
        let store = ScriptedStore(synchronous: true)
        let test = server(store)
        let sender = test.joined(name: "alice"), watcher = test.joined(name: "bob")
        _ = test.messages(of: sender)
        store.failWrites(with: diskFull)

        test.sendIntent(sender, "face.setHappiness", id: "w1", #""value":60"#)
        let post = test.request("POST", "/api/intent", body: #"{"id":"h1","action":"face.setHappiness","value":70}"#)

        let refusal = test.messages(of: sender)
        XCTAssertEqual(types(refusal), ["error"])
        XCTAssertEqual(refusal.first?["code"]?.stringValue, "unavailable")
        XCTAssertEqual(refusal.first?["id"]?.stringValue, "w1")
        XCTAssertEqual(refusal.first?["message"]?.stringValue,
                       "the change could not be recorded (disk full); nothing was applied")
        XCTAssertEqual(post.status, 503)
        XCTAssertEqual(post.json?["code"]?.stringValue, "unavailable")
        XCTAssertEqual(post.json?["id"]?.stringValue, "h1")
        XCTAssertTrue(test.messages(of: watcher).isEmpty, "nobody hears of what was not recorded")
        XCTAssertEqual(test.server.directory["lobby"]?.room?.working.seq, 0, "rolled back")
    }

    func testARefusedRoundOfVotesAnswersEachVoterWithItsOwnID() {
        let store = ScriptedStore(synchronous: true)
        let test = server(store) { $0.crowd.dragon = .vote }
        let voter = test.joined(name: "voter")
        _ = test.messages(of: voter)
        store.failWrites(with: diskFull)

        test.sendIntent(voter, "dragon.back", id: "ws-vote")
        let post = postIntent(test, #"{"id":"http-vote","action":"dragon.back"}"#)
        nextTick(test)
        test.pump(post)

        let refusal = test.messages(of: voter)
        XCTAssertEqual(types(refusal), ["error"])
        XCTAssertEqual(refusal.first?["code"]?.stringValue, "unavailable")
        XCTAssertEqual(refusal.first?["id"]?.stringValue, "ws-vote")
        XCTAssertEqual(post.status, 503)
        XCTAssertEqual(post.json?["id"]?.stringValue, "http-vote")
    }
}
