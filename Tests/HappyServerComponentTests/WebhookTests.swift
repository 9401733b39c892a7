import Foundation
import HappyCore
@testable import HappyServer
import XCTest

/// Receivers in memory: records each batch it is sent and answers with the
/// status it is told (for every URL, or for one), and can hold a URL's POSTs
/// until released (a receiver that does not answer yet).
final class RecordingPoster: WebhookPoster, @unchecked Sendable {
    struct Post {
        let url: String
        let body: [UInt8]
        let headers: [(name: String, value: String)]
        var deliveries: [JSONValue] { (try? JSONParser.parse(body))?["deliveries"]?.arrayValue ?? [] }
        func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
    }

    private let condition = NSCondition()
    private var recorded: [Post] = []
    private var status = 200
    private var statusByURL: [String: Int] = [:]
    private var held: Set<String> = []
    private var answered: [Post] = []

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    var posts: [Post] { locked { recorded } }
    /// The deliveries of the batches it accepted, in order.
    var accepted: [JSONValue] { locked { answered.flatMap(\.deliveries) } }

    func posts(to url: String) -> [Post] { locked { recorded.filter { $0.url == url } } }
    /// The deliveries of the batches accepted at `url`, in order.
    func accepted(at url: String) -> [JSONValue] { locked { answered.filter { $0.url == url }.flatMap(\.deliveries) } }

    func answer(_ status: Int) { locked { self.status = status; statusByURL = [:] } }
    func answer(_ status: Int, at url: String) { locked { statusByURL[url] = status } }

    /// POSTs to `url` wait for `release` (those already waiting too).
    func hold(_ url: String) { locked { _ = held.insert(url) } }
    func release(_ url: String) {
        locked {
            held.remove(url)
            condition.broadcast()
        }
    }

    func post(url: String, body: [UInt8], headers: [(name: String, value: String)], timeoutSeconds: Double)
        -> Result<Int, WebhookPostError> {
        locked {
            let post = Post(url: url, body: body, headers: headers)
            recorded.append(post)
            while held.contains(url) { condition.wait() }
            let status = statusByURL[url] ?? status
            if (200..<300).contains(status) { answered.append(post) }
            return .success(status)
        }
    }
}

/// Webhooks in-process (PROTOCOL.md section 13): what is delivered, how it
/// is signed, retried and bounded. The senders are real threads; the
/// receiver is in memory.
final class WebhookTests: XCTestCase {
    private let secret = "webhook-secret"

    private func server(events: [WebhookEventType] = WebhookEventType.allCases, queueMax: Int = 100_000,
                        poster: RecordingPoster) -> TestServer {
        TestServer(config: TestServer.config {
            $0.webhooks = [HappyConfig.Webhook(url: "http://127.0.0.1:9/hook", events: events, secret: secret)]
            $0.webhookQueueMax = queueMax
        }, webhookPoster: poster)
    }

    /// Ends loop turns until `condition` holds (the senders are other threads).
    private func wait(_ test: TestServer, _ what: String, timeout: Double = 10, _ condition: () -> Bool) {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !condition() {
            guard Date() < deadline else { return XCTFail("timed out waiting for \(what)") }
            test.turn()
            usleep(2000)
        }
    }

    func testARoomsNewsArriveSignedAndInOrder() throws {
        let poster = RecordingPoster()
        let test = server(poster: poster)
        let alice = test.joined(name: "alice")
        // The room's creation is recorded at the end of the turn it loads
        // in, before any client can have read its welcome and answered.
        test.turn()
        _ = test.connect(name: "dash", query: ["observe": "1"])
        test.sendIntent(alice, "dragon.forward", id: "f")
        test.close(alice)
        wait(test, "four deliveries") { poster.accepted.count >= 4 }
        let deliveries = poster.accepted
        XCTAssertEqual(deliveries.compactMap { $0["type"]?.stringValue },
                       ["room.created", "presence.joined", "event", "presence.left"],
                       "the observer is not reported; the room is not empty while it watches")
        XCTAssertEqual(deliveries[1]["data"]?["name"]?.stringValue, "alice")
        XCTAssertEqual(deliveries[2]["data"]?["name"]?.stringValue, "forwardButtonClicked:", "the event as broadcast")
        XCTAssertEqual(deliveries[2]["room"]?.stringValue, "lobby")
        XCTAssertEqual(Set(deliveries.compactMap { $0["id"]?.stringValue }).count, deliveries.count, "unique ids")

        let post = try XCTUnwrap(poster.posts.first)
        XCTAssertEqual(post.url, "http://127.0.0.1:9/hook")
        let expected = HMACSHA256.digest(key: Array(secret.utf8), message: post.body).map { String(format: "%02x", $0) }.joined()
        XCTAssertEqual(post.header("X-Happy-Signature"), "sha256=\(expected)")
        XCTAssertEqual(post.header("Content-Type"), "application/json")
    }

    func testDeliveriesAreQueuedUnderEachWebhooksKeyNotItsPlaceInTheList() throws {
        let events = HappyConfig.Webhook(url: "http://127.0.0.1:9/events", events: [.event], secret: secret)
        let joins = HappyConfig.Webhook(url: "http://127.0.0.1:9/joins", events: [.presenceJoined, .event], secret: secret)
        let store = MemoryRoomStore(historySize: 100)
        let test = TestServer(config: TestServer.config { $0.webhooks = [events, joins] }, store: store)
        let client = test.joined(name: "alice")
        test.turn()
        test.sendIntent(client, "dragon.forward")
        test.turn()
        func types(_ webhook: Int) throws -> [String] {
            try store.outbox.waiting(webhook: webhook, limit: 10).compactMap {
                try JSONParser.parse($0.json)["type"]?.stringValue
            }
        }
        XCTAssertEqual(try types(events.key), ["event"])
        XCTAssertEqual(try types(joins.key), ["presence.joined", "event"])
        XCTAssertEqual(try types(0) + types(1), [], "nothing under a list position")
    }

    func testTheLastClientLeavingEmptiesTheRoom() {
        let poster = RecordingPoster()
        let test = server(events: [.roomEmptied], poster: poster)
        let (a, b) = (test.joined(room: "den"), test.joined(room: "den"))
        test.close(a)
        test.close(b)
        wait(test, "room.emptied") { !poster.accepted.isEmpty }
        XCTAssertEqual(poster.accepted.compactMap { $0["type"]?.stringValue }, ["room.emptied"])
        XCTAssertEqual(poster.accepted.first?["room"]?.stringValue, "den")
    }

    func testAReceiverThatFailsIsRetriedAndGetsEverythingInOrder() {
        let poster = RecordingPoster()
        poster.answer(503)
        let test = server(events: [.event], poster: poster)
        let client = test.joined()
        for value in 1...5 { test.sendIntent(client, "face.setHappiness", #""value":\#(value * 10)"#) }
        wait(test, "a first attempt") { poster.posts.count >= 1 }
        XCTAssertTrue(poster.accepted.isEmpty)
        for value in 6...8 { test.sendIntent(client, "face.setHappiness", #""value":\#(value * 10)"#) }
        poster.answer(200)
        wait(test, "every event") { poster.accepted.count >= 8 }
        XCTAssertEqual(poster.accepted.compactMap { $0["data"]?["seq"]?.intValue }, Array(1...8), "in order, none lost")
        XCTAssertGreaterThanOrEqual(test.server.senders.stats.failedAttempts.load(ordering: .relaxed), 1)
    }

    func testPastTheQueueBoundTheOldestAreDropped() {
        let poster = RecordingPoster()
        poster.answer(500)
        let test = server(events: [.event], queueMax: 3, poster: poster)
        let client = test.joined()
        test.sendIntent(client, "face.setHappiness", #""value":5"#)
        wait(test, "a first failed attempt") { poster.posts.count >= 1 }
        for value in 2...10 { test.sendIntent(client, "face.setHappiness", #""value":\#(value * 5)"#) }
        // The retry trims the queue to its bound before it posts again.
        wait(test, "a retry") { poster.posts.count >= 2 }
        XCTAssertEqual(poster.posts.last?.deliveries.count, 3)
        poster.answer(200)
        wait(test, "the newest three") { poster.accepted.count >= 3 }
        XCTAssertEqual(poster.accepted.compactMap { $0["data"]?["seq"]?.intValue }, [8, 9, 10])
        XCTAssertEqual(test.server.senders.stats.dropped.load(ordering: .relaxed), 7)
    }
}
