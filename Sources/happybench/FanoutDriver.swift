import Foundation
import HappyClientKit
import Synchronization

/// What one fan-out run measured.
struct FanoutResult {
    var subscribers = 0
    var connected = 0
    var connectSeconds = 0.0
    var publishSeconds = 0.0
    var intentsSent = 0
    var delivered = 0
    var acks = 0
    var errors = 0
    var resyncs = 0
    var unmatched = 0
    var p50 = 0.0, p99 = 0.0, maxLatency = 0.0
    var messagesPerSecond: Double { publishSeconds > 0 ? Double(delivered) / publishSeconds : 0 }
    var intentsPerSecond: Double { publishSeconds > 0 ? Double(acks) / publishSeconds : 0 }
}

/// N subscribers and one publisher in one room on one client loop. The
/// publisher sends `dragon.forward`/`dragon.back` alternately; intent k is
/// matched to the event with seq = base + k on every connection. Either a
/// window of intents in flight (until delivered to all) or a fixed rate.
final class FanoutDriver: WebSocketDelegate, @unchecked Sendable {
    enum Pace { case window(Int), rate(Double) }

    private let loop: ClientLoop
    /// Subscribers are spread over these servers in turn; the publisher uses the first.
    private let urls: [String]
    private let subscriberCount: Int
    private let pace: Pace
    private var connections: [WebSocketConnection] = []
    private var publisher: WebSocketConnection?
    private var nextToConnect = 0
    private var connecting = 0
    private let maxConnecting = 200

    // Loop-thread state.
    private var welcomed = 0
    private var baseSeq: Int64 = -1
    private var publishing = false
    private var sent = 0
    private var sendTimes: [UInt64] = [0]
    private var counts: [UInt32] = [0]
    private var doneK = 0
    private var histogram = LatencyHistogram()
    private var result = FanoutResult()
    private let phase = NSCondition()

    init(loop: ClientLoop, urls: [String], subscribers: Int, pace: Pace) {
        self.loop = loop
        self.urls = urls
        subscriberCount = subscribers
        self.pace = pace
        result.subscribers = subscribers
    }

    private static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Connects everybody; returns the number connected within `timeout`.
    func connect(timeout: Double) -> Int {
        let started = Date()
        phase.lock()
        publisher = loop.connect(WebSocketURL("\(urls[0])?room=bench&name=pub")!,
                                 options: WebSocketOptions(keepaliveSeconds: nil), delegate: self)
        for _ in 0..<min(maxConnecting, subscriberCount) { connectNext() }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while welcomed < subscriberCount + 1 && Date() < deadline { _ = phase.wait(until: deadline) }
        result.connected = welcomed
        phase.unlock()
        result.connectSeconds = Date().timeIntervalSince(started)
        return welcomed
    }

    /// Must hold `phase`.
    private func connectNext() {
        guard nextToConnect < subscriberCount else { return }
        nextToConnect += 1
        connecting += 1
        let url = urls[nextToConnect % urls.count]
        connections.append(loop.connect(WebSocketURL("\(url)?room=bench&name=b\(nextToConnect)")!,
                                        options: WebSocketOptions(keepaliveSeconds: nil), delegate: self))
    }

    /// Publishes for `seconds`, then waits (up to `drain`) for the last events.
    func publish(seconds: Double, drain: Double = 10) -> FanoutResult {
        let started = Date()
        phase.lock()
        publishing = true
        phase.unlock()
        switch pace {
        case .window:
            loop.perform { self.sendWhileWindowAllows() }
            Thread.sleep(forTimeInterval: seconds)
        case .rate(let perSecond):
            let interval = 1 / perSecond
            var next = Date()
            while Date().timeIntervalSince(started) < seconds {
                loop.perform { self.sendOne() }
                next += interval
                Thread.sleep(until: next)
            }
        }
        phase.lock()
        publishing = false
        result.publishSeconds = Date().timeIntervalSince(started)
        let deadline = Date(timeIntervalSinceNow: drain)
        while doneK < sent && Date() < deadline { _ = phase.wait(until: deadline) }
        result.intentsSent = sent
        result.p50 = histogram.percentile(0.50)
        result.p99 = histogram.percentile(0.99)
        result.maxLatency = Double(histogram.maxMicros) / 1000
        let final = result
        phase.unlock()
        return final
    }

    func closeAll() {
        for connection in connections { connection.abort() }
        publisher?.abort()
    }

    // MARK: loop thread

    private func sendWhileWindowAllows() {
        guard case .window(let window) = pace else { return }
        phase.lock(); defer { phase.unlock() }
        while publishing && sent - doneK < window { sendLocked() }
    }

    private func sendOne() {
        phase.lock(); defer { phase.unlock() }
        if publishing { sendLocked() }
    }

    private func sendLocked() {
        guard let publisher, baseSeq >= 0 else { return }
        sent += 1
        sendTimes.append(Self.now())
        counts.append(0)
        publisher.send(text: IntentEncoder.intent(sent % 2 == 1 ? .dragonForward : .dragonBack, id: "\(sent)"))
    }

    func webSocketDidOpen(_ connection: WebSocketConnection, subprotocol: String?) {}

    func webSocket(_ connection: WebSocketConnection, didReceive bytes: UnsafeRawBufferPointer, binary: Bool) {
        guard bytes.count > 12 else { return }
        // Messages start with {"type":"<t>..., the server writes "type" first.
        let kind = bytes[9]
        phase.lock(); defer { phase.unlock() }
        switch kind {
        case UInt8(ascii: "e") where bytes[10] == UInt8(ascii: "v"):
            guard let seq = Self.seq(in: bytes), baseSeq >= 0 else { result.unmatched += 1; return }
            let k = Int(seq - baseSeq)
            guard k >= 1, k <= sent else { result.unmatched += 1; return }
            histogram.add(nanoseconds: Self.now() - sendTimes[k])
            result.delivered += 1
            counts[k] += 1
            if counts[k] >= UInt32(subscriberCount + 1) && k == doneK + 1 {
                while doneK < sent && counts[doneK + 1] >= UInt32(subscriberCount + 1) { doneK += 1 }
                phase.broadcast()
                if publishing, case .window = pace {
                    while sent - doneK < windowSize { sendLocked() }
                }
            }
        case UInt8(ascii: "a"):
            if connection === publisher { result.acks += 1 }
        case UInt8(ascii: "w"):
            welcomed += 1
            if connection === publisher, let seq = Self.seq(in: bytes) { baseSeq = seq }
            if connection !== publisher {
                connecting -= 1
                connectNext()
            }
            phase.broadcast()
        case UInt8(ascii: "e"):
            result.errors += 1
        case UInt8(ascii: "r"):
            result.resyncs += 1
        default:
            break
        }
    }

    private var windowSize: Int {
        if case .window(let window) = pace { return window }
        return 0
    }

    func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16?, reason: String) {}

    func webSocketDidFail(_ connection: WebSocketConnection, error: String) {
        phase.lock(); defer { phase.unlock() }
        if connection !== publisher {
            connecting -= 1
            connectNext()
        }
    }

    /// The number after the first `"seq":` in a message.
    static func seq(in bytes: UnsafeRawBufferPointer) -> Int64? {
        let key: [UInt8] = Array("\"seq\":".utf8)
        let limit = bytes.count - key.count
        guard limit > 0 else { return nil }
        var index = 0
        outer: while index < limit {
            for offset in 0..<key.count where bytes[index + offset] != key[offset] {
                index += 1
                continue outer
            }
            var value: Int64 = 0
            var position = index + key.count
            var digits = 0
            while position < bytes.count, bytes[position] >= 0x30, bytes[position] <= 0x39 {
                value = value * 10 + Int64(bytes[position] - 0x30)
                position += 1
                digits += 1
            }
            return digits > 0 ? value : nil
        }
        return nil
    }
}
