import Foundation
import HappyCore
@testable import HappyServer
import XCTest

/// A reload (SIGHUP) that changes `webhooks` or `webhookQueueMax` applies to
/// what happens next: each queued delivery still reaches the receiver it was
/// made for, removed webhooks' senders stop without holding up the loop, new
/// ones start. The senders are real threads; the receivers are in memory.
final class WebhookReloadTests: XCTestCase {
    private func hook(_ path: String, _ events: [WebhookEventType] = [.event], secret: String = "secret")
        -> HappyConfig.Webhook {
        HappyConfig.Webhook(url: "http://127.0.0.1:9/\(path)", events: events, secret: secret)
    }

    /// Ends loop turns until `condition` holds (the senders are other threads).
    private func wait(_ test: TestServer, _ what: String, timeout: Double = 15, file: StaticString = #filePath,
                      line: UInt = #line, _ condition: () -> Bool) {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !condition() {
            guard Date() < deadline else { return XCTFail("timed out waiting for \(what)", file: file, line: line) }
            test.turn()
            usleep(2000)
        }
    }

    private func seqs(_ deliveries: [JSONValue]) -> [Int] {
        deliveries.compactMap { $0["data"]?["seq"]?.intValue }
    }

    private func setHappiness(_ test: TestServer, _ client: TestClient, _ values: ClosedRange<Int>) {
        for value in values { test.sendIntent(client, "face.setHappiness", #""value":\#(value * 10)"#) }
        test.turn()
    }

    func testAReloadAddsRemovesAndReordersWebhooksAndEveryQueuedDeliveryReachesItsOwnReceiver() throws {
        let poster = RecordingPoster()
        poster.answer(503)
        let (gone, first, second) = (hook("gone"), hook("first"), hook("second"))
        let store = MemoryRoomStore(historySize: 100)
        let test = TestServer(config: TestServer.config { $0.webhooks = [gone, first, second] }, store: store,
                              webhookPoster: poster)
        let client = test.joined(name: "alice")
        test.turn()
        setHappiness(test, client, 1...3)
        wait(test, "a failed attempt at each receiver") {
            [gone, first, second].allSatisfy { !poster.posts(to: $0.url).isEmpty }
        }

        // Reordered (positions 1 and 2 become 1 and 0), one removed, one added, a secret changed.
        let added = hook("added")
        let resigned = hook("second", secret: "new-secret")
        test.reload { $0.webhooks = [resigned, first, added] }
        XCTAssertEqual(test.server.config.webhooks, [resigned, first, added], "taken, not kept as it was")
        setHappiness(test, client, 4...5)
        poster.answer(200)

        wait(test, "every receiver's deliveries") {
            seqs(poster.accepted(at: first.url)).count >= 5 && seqs(poster.accepted(at: second.url)).count >= 5
                && seqs(poster.accepted(at: added.url)).count >= 2
        }
        XCTAssertEqual(seqs(poster.accepted(at: first.url)), [1, 2, 3, 4, 5], "its queue, in order, none lost")
        XCTAssertEqual(seqs(poster.accepted(at: second.url)), [1, 2, 3, 4, 5])
        XCTAssertEqual(seqs(poster.accepted(at: added.url)), [4, 5], "from the reload on")
        let post = try XCTUnwrap(poster.posts(to: second.url).last)
        let signature = HMACSHA256.digest(key: Array("new-secret".utf8), message: post.body)
            .map { String(format: "%02x", $0) }.joined()
        XCTAssertEqual(post.header("X-Happy-Signature"), "sha256=\(signature)", "a kept webhook signs with its new secret")

        wait(test, "the removed webhook's sender to leave") { !test.server.senders.runningKeys.contains(gone.key) }
        XCTAssertEqual(test.server.senders.runningKeys, [first.key, second.key, added.key])
        let attempts = poster.posts(to: gone.url).count
        XCTAssertEqual(try store.outbox.count(webhook: gone.key), 3, "what it had queued stays, for when it is listed again")
        Thread.sleep(forTimeInterval: 1.5)
        XCTAssertEqual(poster.posts(to: gone.url).count, attempts, "no more attempts once removed")
        XCTAssertEqual(poster.accepted(at: gone.url).count, 0)
    }

    func testRemovingAWebhookWhoseReceiverHangsDoesNotWaitForItsPOST() throws {
        let poster = RecordingPoster()
        let slow = hook("slow")
        poster.hold(slow.url)
        let store = MemoryRoomStore(historySize: 100)
        let test = TestServer(config: TestServer.config { $0.webhooks = [slow] }, store: store, webhookPoster: poster)
        let client = test.joined()
        test.turn()
        setHappiness(test, client, 1...1)
        wait(test, "a POST under way") { !poster.posts(to: slow.url).isEmpty }
        setHappiness(test, client, 2...2)

        let started = Date()
        test.reload { $0.webhooks = [] }
        XCTAssertLessThan(Date().timeIntervalSince(started), 0.5, "the reload does not wait for the POST")
        XCTAssertEqual(test.server.senders.runningKeys, [slow.key], "the thread finishes its POST")
        poster.release(slow.url)
        wait(test, "the sender to leave") { test.server.senders.runningKeys.isEmpty }
        XCTAssertEqual(seqs(poster.accepted(at: slow.url)), [1], "the batch it was sending was answered")
        XCTAssertEqual(try store.outbox.count(webhook: slow.key), 1, "the next one stays queued")
        setHappiness(test, client, 3...3)
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(poster.posts(to: slow.url).count, 1, "nothing more goes to it")
    }

    func testAWebhookListedAgainBeforeItsSenderLeftKeepsOneSenderAndItsQueue() {
        let poster = RecordingPoster()
        let hooked = hook("again")
        poster.hold(hooked.url)
        let test = TestServer(config: TestServer.config { $0.webhooks = [hooked] }, webhookPoster: poster)
        let client = test.joined()
        test.turn()
        setHappiness(test, client, 1...1)
        wait(test, "a POST under way") { !poster.posts(to: hooked.url).isEmpty }
        test.reload { $0.webhooks = [] }
        setHappiness(test, client, 2...2)
        test.reload { $0.webhooks = [hooked] }
        setHappiness(test, client, 3...3)
        poster.release(hooked.url)
        wait(test, "the events made while it was listed") { seqs(poster.accepted(at: hooked.url)).count >= 2 }
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(seqs(poster.accepted(at: hooked.url)), [1, 3],
                       "once each, in order (event 2 came while it was not listed: nothing was made for it)")
        XCTAssertEqual(test.server.senders.runningKeys, [hooked.key])
    }

    func testAServerStartedWithoutWebhooksSendsToOneAReloadLists() {
        let poster = RecordingPoster()
        let test = TestServer(config: TestServer.config(), webhookPoster: poster)
        XCTAssertNil(test.server.webhookOutbox)
        let client = test.joined(name: "alice")
        test.turn()
        setHappiness(test, client, 1...1)
        let hooked = hook("late", [.event, .presenceJoined])
        test.reload { $0.webhooks = [hooked] }
        XCTAssertNotNil(test.server.webhookOutbox, "opened by the reload")
        setHappiness(test, client, 2...2)
        _ = test.joined(name: "bob")
        wait(test, "the event and the join") { poster.accepted(at: hooked.url).count >= 2 }
        XCTAssertEqual(poster.accepted(at: hooked.url).compactMap { $0["type"]?.stringValue }, ["event", "presence.joined"])
        XCTAssertEqual(seqs(poster.accepted(at: hooked.url)), [2], "nothing from before it was listed")
        XCTAssertEqual(test.server.senders.runningKeys, [hooked.key])
    }

    func testAReloadedQueueBoundAppliesAtTheNextTrim() {
        let poster = RecordingPoster()
        poster.answer(500)
        let hooked = hook("bounded")
        let test = TestServer(config: TestServer.config { $0.webhooks = [hooked] }, webhookPoster: poster)
        let client = test.joined()
        test.turn()
        setHappiness(test, client, 1...6)
        wait(test, "a failed attempt") { !poster.posts(to: hooked.url).isEmpty }
        test.reload { $0.webhookQueueMax = 2 }
        poster.answer(200)
        wait(test, "the newest two") { seqs(poster.accepted(at: hooked.url)).count >= 2 }
        XCTAssertEqual(seqs(poster.accepted(at: hooked.url)), [5, 6])
        XCTAssertEqual(test.server.senders.stats.dropped.load(ordering: .relaxed), 4)
    }
}
