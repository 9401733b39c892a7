import Foundation
import HappyCore
import XCTest

/// lws reads a socket `rx_buffer_size` bytes (256) a loop turn; the server
/// reads on while messages come in before it writes, so a burst that
/// arrives at once leaves in a few writes per client instead of one per
/// 256 bytes read.
final class ReadAheadTests: XCTestCase {
    func testABurstArrivingAtOnceLeavesInAFewWritesPerClient() throws {
        let server = try ServerProcess([
            "persistence": ["enabled": false],
            "limits": ["intentsPerSecond": 1_000_000, "intentBurst": 1_000_000, "floodLimit": 1_000_000],
        ])
        let watcher = try RawWebSocket(port: server.port, target: "/ws?name=watcher", timeout: 10)
        let sender = try RawWebSocket(port: server.port, target: "/ws?name=burst", timeout: 10)
        for client in [watcher, sender] {
            XCTAssertTrue(client.upgraded, client.handshake)
            guard case .text(let welcome)? = client.nextFrame(), welcome.contains(#""type":"welcome""#) else {
                return XCTFail("no welcome")
            }
        }
        guard case .text(let joined)? = watcher.nextFrame(), joined.contains(#""type":"presence""#) else {
            return XCTFail("the watcher did not hear the sender join")
        }
        let writesBefore = try server.metric("happy_writes_out_total")
        let messagesBefore = try server.metric("happy_messages_out_total")

        // 100 intents in one socket write: about 6.6 KB, 26 reads of 256 bytes.
        let count = 100
        var burst: [UInt8] = []
        for index in 0..<count {
            let intent = #"{"type":"intent","id":"r\#(index)","action":"dragon.toggleHidden"}"#
            burst += RawWebSocket.frame(opcode: 0x1, Array(intent.utf8))
        }
        XCTAssertGreaterThan(burst.count, 6000)
        try sender.socket.send(burst)

        var acks = 0, senderEvents = 0, watcherEvents = 0
        while acks < count || senderEvents < count, let frame = sender.nextFrame() {
            guard case .text(let text) = frame else { continue }
            if text.contains(#""type":"ack""#) { acks += 1 }
            if text.contains(#""type":"event""#) { senderEvents += 1 }
        }
        while watcherEvents < count, let frame = watcher.nextFrame() {
            if case .text(let text) = frame, text.contains(#""type":"event""#) { watcherEvents += 1 }
        }
        XCTAssertEqual(acks, count, "every intent acked")
        XCTAssertEqual(senderEvents, count)
        XCTAssertEqual(watcherEvents, count)
        XCTAssertEqual(try server.metric("happy_messages_out_total") - messagesBefore, Double(3 * count))
        let writes = try server.metric("happy_writes_out_total") - writesBefore
        // Read on, the burst takes two loop turns (sixteen further reads each), a
        // write per client each; a timer firing in between may cut a turn short.
        // Without reading on it took a turn per read: 26 here, two writes each
        // (7 turns with a 1 KB buffer).
        XCTAssertGreaterThanOrEqual(writes, 2)
        XCTAssertLessThanOrEqual(writes, 10, "300 messages left in \(writes) writes")
    }
}
