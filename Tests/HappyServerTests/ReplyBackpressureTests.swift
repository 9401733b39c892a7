import Foundation
import HappyCore
import XCTest

/// Acks and errors are never dropped (PROTOCOL.md section 5): while a
/// client's unsent replies pass `maxQueuedBytes`, the server stops reading
/// it until they drain. Only a client that reads nothing for
/// `writeTimeoutSeconds` is closed.
final class ReplyBackpressureTests: XCTestCase {
    static var limits: [String: Any] {
        ["maxQueuedBytes": 16384, "intentsPerSecond": 1_000_000,
                                        "intentBurst": 1_000_000, "floodLimit": 1_000_000]
    }

    func testABurstFromAClientThatReadsIsAnsweredInFull() throws {
        let server = try ServerProcess(["limits": Self.limits])
        // A small receive buffer keeps the kernel from absorbing the burst's
        // answers (autotuning would grow it to megabytes), so the server's
        // own queue passes `maxQueuedBytes` and it must pause reading.
        let client = try RawWebSocket(port: server.port, target: "/ws?name=burst", timeout: 20, receiveBuffer: 4096)
        XCTAssertTrue(client.upgraded, client.handshake)
        // The server reads a burst in few loop turns, so its events outgrow the
        // 16 KiB log at once and the client is resynced instead: the acks alone
        // (about 60 bytes each) must outgrow the socket buffers (the server's
        // 64 KiB send buffer, doubled by the kernel, and the client's 4 KiB).
        let count = 4000
        let sender = Thread {
            for index in 0..<count {
                guard (try? client.send(text: #"{"type":"intent","id":"b\#(index)","action":"dragon.toggleHidden"}"#)) != nil
                else { return }
            }
        }
        sender.start()
        // A reader that lags for a moment lets well over 16 KiB of acks pile up.
        Thread.sleep(forTimeInterval: 0.5)

        var acked: [String] = []
        var events = 0, resyncs = 0
        while acked.count < count, let frame = client.nextFrame() {
            guard case .text(let text) = frame else { XCTFail("unexpected frame \(frame)"); break }
            let message = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            switch message["type"] as? String {
            case "ack": acked.append(message["id"] as? String ?? "?")
            case "event": events += 1
            case "resync": resyncs += 1
            case "welcome": continue
            default: XCTFail("unexpected \(text)")
            }
        }
        XCTAssertEqual(acked, (0..<count).map { "b\($0)" }, "every intent answered once, in order")
        XCTAssertTrue(events >= count - 1 || resyncs > 0, "events missed without a resync: \(events) of \(count)")
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/state").json?["seq"]?.intValue, count)

        XCTAssertGreaterThanOrEqual(try server.metric("happy_read_pauses_total"), 1, "the burst paused reading")
        XCTAssertEqual(try server.metric("happy_slow_reader_closes_total"), 0)
        XCTAssertFalse(server.logText.contains("dropping client"), server.logText.suffix(2000).description)
        XCTAssertLessThanOrEqual(server.logText.components(separatedBy: "reading paused").count - 1, 1,
                                 "the pause is logged once per client")
    }

    func testAClientThatSendsAndNeverReadsIsClosedOnceAfterTheWriteTimeout() throws {
        var limits = Self.limits
        limits["writeTimeoutSeconds"] = 2
        let server = try ServerProcess(["limits": limits])
        let (watcher, _) = try TestClient.join(server, name: "watcher")
        let raw = try RawWebSocket(port: server.port, target: "/ws?name=mute", receiveBuffer: 4096)
        XCTAssertTrue(raw.upgraded, raw.handshake)
        let joined = try XCTUnwrap(watcher.next(type: "presence"))
        XCTAssertEqual(joined["joined"]?["name"]?.stringValue, "mute")
        let sender = Thread {
            for index in 0..<20_000 {
                guard (try? raw.send(text: #"{"type":"intent","id":"m\#(index)","action":"dragon.toggleHidden"}"#)) != nil
                else { return }
            }
        }
        sender.start()

        let left = try XCTUnwrap(watcher.next(type: "presence", timeout: 30), "the mute client was not dropped; watcher closed: \(watcher.isClosed) \(String(describing: watcher.closeCode)) \(watcher.closeReason)\n\(server.logText.suffix(3000))")
        XCTAssertEqual(left["left"]?["name"]?.stringValue, "mute")
        // Until the kernel's socket buffers are full its acks still drain, so
        // reading may resume and pause again a few times; it is logged once.
        XCTAssertGreaterThanOrEqual(try server.metric("happy_read_pauses_total"), 1, "its unread acks paused reading")
        XCTAssertEqual(try server.metric("happy_slow_reader_closes_total"), 1)
        let log = server.logText
        XCTAssertEqual(log.components(separatedBy: "reading paused").count - 1, 1, log.suffix(3000).description)
        XCTAssertEqual(log.components(separatedBy: "dropping client").count - 1, 1, log.suffix(3000).description)
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/state").json?["presenceCount"]?.intValue, 1)
    }
}
