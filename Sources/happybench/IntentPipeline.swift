import Foundation
import HappyClientKit

/// A few connections in one room, each keeping `window` intents in flight
/// (the next one goes when an ack comes back), so the server commits as
/// fast as it can group them. Every intent is a dragon button press, which
/// is an event even when the dragon cannot move: intents sent = events added.
final class IntentPipeline: WebSocketDelegate, @unchecked Sendable {
    struct Counts {
        var sent = 0
        var acked = 0
        var errors = 0
        var resyncs = 0
        /// Connections closed or failed (their intents in flight never get an answer).
        var lost = 0
        /// The room's seq: the highest seq acked, or the welcome's.
        var seq: Int64 = 0
    }

    private let loop: ClientLoop
    private let url: String
    private let room: String
    private let window: Int
    private var connections: [WebSocketConnection] = []
    private var inFlight: [Int] = []
    private let state = NSCondition()
    // Guarded by `state`.
    private var welcomed = 0
    private var counts = Counts()
    /// Intents to send in all (raised by `send(upTo:)`).
    private var limit = 0

    init(loop: ClientLoop, url: String, room: String, window: Int) {
        self.loop = loop
        self.url = url
        self.room = room
        self.window = window
    }

    /// Opens `count` connections; the number welcomed within `timeout`.
    func connect(count: Int, timeout: Double) -> Int {
        state.lock()
        for index in 0..<count {
            connections.append(loop.connect(WebSocketURL("\(url)?room=\(room)&name=writer\(index)")!,
                                            options: WebSocketOptions(keepaliveSeconds: nil), delegate: self))
            inFlight.append(0)
        }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while welcomed < count && Date() < deadline { _ = state.wait(until: deadline) }
        defer { state.unlock() }
        return welcomed
    }

    var snapshot: Counts {
        state.lock(); defer { state.unlock() }
        return counts
    }

    /// Keeps sending until `total` intents have been sent since the start.
    func send(upTo total: Int) {
        state.lock()
        limit = max(limit, total)
        state.unlock()
        loop.perform { self.topUpAll() }
    }

    /// Sends nothing more.
    func stop() {
        state.lock()
        limit = counts.sent
        state.unlock()
    }

    /// Waits until every intent asked for (`send(upTo:)`, or up to `stop()`)
    /// has its answer; false on timeout or when a connection was lost.
    func drain(timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        state.lock(); defer { state.unlock() }
        while counts.acked + counts.errors < limit && counts.lost == 0 && Date() < deadline {
            _ = state.wait(until: deadline)
        }
        return counts.acked + counts.errors >= limit && counts.lost == 0
    }

    func closeAll() {
        for connection in connections { connection.abort() }
    }

    // MARK: loop thread

    private func topUpAll() {
        state.lock(); defer { state.unlock() }
        for index in connections.indices { topUp(index) }
    }

    /// Must hold `state`.
    private func topUp(_ index: Int) {
        while inFlight[index] < window && counts.sent < limit {
            counts.sent += 1
            inFlight[index] += 1
            let action: Action = counts.sent % 2 == 1 ? .dragonForward : .dragonBack
            connections[index].send(text: IntentEncoder.intent(action, id: "\(counts.sent)"))
        }
    }

    func webSocketDidOpen(_ connection: WebSocketConnection, subprotocol: String?) {}

    func webSocket(_ connection: WebSocketConnection, didReceive bytes: UnsafeRawBufferPointer, binary: Bool) {
        guard bytes.count > 12 else { return }
        // Messages start with {"type":"<t>...; events, the bulk, are not read further.
        let kind = bytes[9]
        if kind == UInt8(ascii: "e") && bytes[10] == UInt8(ascii: "v") { return }
        state.lock(); defer { state.unlock() }
        switch kind {
        case UInt8(ascii: "a"), UInt8(ascii: "e"):
            guard let index = connections.firstIndex(where: { $0 === connection }) else { return }
            if kind == UInt8(ascii: "a") {
                counts.acked += 1
                if let seq = FanoutDriver.seq(in: bytes) { counts.seq = max(counts.seq, seq) }
            } else {
                counts.errors += 1
            }
            inFlight[index] -= 1
            topUp(index)
            // Wake a waiting `drain` only when it is done, not on every ack.
            if counts.acked + counts.errors >= limit { state.broadcast() }
        case UInt8(ascii: "w"):
            welcomed += 1
            if let seq = FanoutDriver.seq(in: bytes) { counts.seq = max(counts.seq, seq) }
            state.broadcast()
        case UInt8(ascii: "r"):
            counts.resyncs += 1
        default:
            break
        }
    }

    func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16?, reason: String) {
        state.lock(); defer { state.unlock() }
        counts.lost += 1
        state.broadcast()
    }

    func webSocketDidFail(_ connection: WebSocketConnection, error: String) {
        state.lock(); defer { state.unlock() }
        counts.lost += 1
        state.broadcast()
    }
}
