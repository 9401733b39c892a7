import Foundation
import HappyClientKit

/// What one live-pointer run measured, per receiver and overall.
struct PointerResult {
    var clients = 0
    var connected = 0
    /// How long the clients moved; rates are over this window.
    var seconds = 0.0
    var movesSent = 0
    /// How late the latest move was sent, at worst (ms), and moves sent over 10 ms late:
    /// the load generator's own scheduling on a shared machine.
    var maxSendLag = 0.0
    var lateMoves = 0
    /// The longest the client loop took to run a probe posted to it every
    /// 10 ms (ms): how long receiving and writing stalled on the client side.
    var maxLoopLag = 0.0
    var batchesPerSecond = (mean: 0.0, max: 0.0)
    var bytesPerSecond = (mean: 0.0, max: 0.0)
    /// The most `pointers` messages any receiver got in any sliding 1-second window.
    var maxBatchesInOneSecond = 0
    /// The same count over each batch's first arrival at any receiver (every
    /// receiver gets every batch here, so a receiver's k-th arrival is batch
    /// k): closer to when the server sent it, with less of the jitter of
    /// writing to and reading from 200 sockets.
    var maxBatchesInOneSecondFirstArrivals = 0
    /// The shortest time any receiver took to get `ceiling` + 1 batches in a
    /// row (ms): under 1000 only if the pacing let more than `ceiling` a
    /// second through, just under when arrival jitter alone did.
    var shortestSpanOfCeilingIntervals = 0.0
    var shortestSpanOfCeilingIntervalsFirstArrivals = 0.0
    /// Entries matched to the move that produced them.
    var entriesMatched = 0
    var entriesUnmatched = 0
    /// Entries carrying the receiver's own pointer (the protocol says never).
    var ownEntries = 0
    /// Distinct movers a receiver saw at least once (mean and fewest over receivers).
    var moversSeen = (mean: 0.0, min: 0)
    var errors = 0
    var p50 = 0.0, p99 = 0.0, maxLatency = 0.0
}

/// N clients in one room, each both a mover and a receiver. Every client
/// sends `pointer` messages at `rate` per second, the clients' phases spread
/// evenly over the period; move m of a client is at x = (m mod 1000)/1000,
/// y = (m div 1000)/1000, so each position is distinct and a receiver that
/// gets entry (id, x, y) finds when mover `id` sent it. Conflated moves are
/// never delivered and are not counted.
final class PointerDriver: WebSocketDelegate, @unchecked Sendable {
    private struct Client {
        let connection: WebSocketConnection
        var id = ""
        var welcomed = false
        /// When this client sent each of its moves, by move number.
        var sendTimes: [UInt64] = []
        /// Arrival time of every `pointers` message inside the moving window.
        var arrivals: [UInt64] = []
        var bytes = 0
        var seen: [Bool]
    }

    private let loop: ClientLoop
    private let url: String
    private let room: String
    private let clientCount: Int
    private let rate: Double

    private let lock = NSCondition()
    private var clients: [Client] = []
    private var indexOf: [ObjectIdentifier: Int] = [:]
    /// Mover index by a hash of its participant id (ids are parsed from raw bytes).
    private var moverOf: [UInt64: Int] = [:]
    private var welcomed = 0
    private var moving = false
    private var stopRequested = false
    private var windowStart: UInt64 = 0
    private var windowEnd: UInt64 = 0
    private var ticker: Thread?
    private var tickerDone = false
    private var histogram = LatencyHistogram()
    private var result = PointerResult()

    /// Batches a second the server may send at most (1000 / pointerIntervalMs).
    private let ceiling: Int

    init(loop: ClientLoop, url: String, room: String, clients: Int, rate: Double, ceiling: Int) {
        self.ceiling = ceiling
        self.loop = loop
        self.url = url
        self.room = room
        clientCount = clients
        self.rate = rate
        result.clients = clients
    }

    private static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Connects every client; returns how many were welcomed within `timeout`.
    func connect(timeout: Double) -> Int {
        lock.lock(); defer { lock.unlock() }
        for index in 0..<clientCount {
            let connection = loop.connect(WebSocketURL("\(url)?room=\(room)&name=p\(index)")!,
                                          options: WebSocketOptions(keepaliveSeconds: nil), delegate: self)
            indexOf[ObjectIdentifier(connection)] = index
            clients.append(Client(connection: connection, seen: [Bool](repeating: false, count: clientCount)))
        }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while welcomed < clientCount && Date() < deadline { _ = lock.wait(until: deadline) }
        result.connected = welcomed
        return welcomed
    }

    /// Starts moving every client (on a thread of its own) until `stop`.
    func start() {
        lock.lock()
        moving = true
        windowStart = Self.now()
        lock.unlock()
        let thread = Thread { [self] in tick() }
        thread.name = "pointer-moves"
        ticker = thread
        thread.start()
    }

    /// Stops moving; rates are over the time from `start` to here.
    func stopMoving() {
        lock.lock(); defer { lock.unlock() }
        stopRequested = true
        while ticker != nil && !tickerDone { lock.wait() }
        moving = false
        windowEnd = Self.now()
    }

    /// Sums up (after `stopMoving`).
    func finish() -> PointerResult {
        lock.lock(); defer { lock.unlock() }
        return summary()
    }

    func closeAll() {
        for client in clients { client.connection.abort() }
    }

    /// Sends the moves that are due, about once a millisecond: the k-th move
    /// overall belongs to client k mod N and is due k/(N·rate) seconds in.
    private func tick() {
        let step = 1 / (rate * Double(clientCount))
        let started = Date()
        var next = 0
        var nextProbe = Date()
        while true {
            if Date() >= nextProbe {
                nextProbe = Date(timeIntervalSinceNow: 0.010)
                let posted = Self.now()
                loop.perform { [self] in
                    let lag = Double(Self.now() - posted) / 1e6
                    lock.lock()
                    result.maxLoopLag = max(result.maxLoopLag, lag)
                    lock.unlock()
                }
            }
            let elapsed = Date().timeIntervalSince(started)
            let due = Int(elapsed / step) + 1
            lock.lock()
            if stopRequested {
                tickerDone = true
                lock.broadcast()
                lock.unlock()
                return
            }
            if next < due {
                result.maxSendLag = max(result.maxSendLag, (elapsed - Double(next) * step) * 1000)
                // Moves k with k·step < elapsed − 10 ms.
                let overdue = elapsed > 0.010 ? Int((elapsed - 0.010) / step) + 1 : 0
                result.lateMoves += max(0, overdue - next)
            }
            while next < due {
                sendMove(of: next % clientCount)
                next += 1
            }
            lock.unlock()
            let wait = started.addingTimeInterval(Double(next) * step).timeIntervalSinceNow
            Thread.sleep(forTimeInterval: max(0.001, wait))
        }
    }

    /// Must hold `lock`.
    private func sendMove(of index: Int) {
        let move = clients[index].sendTimes.count
        clients[index].sendTimes.append(Self.now())
        result.movesSent += 1
        clients[index].connection.send(
            text: #"{"type":"pointer","view":"face","x":\#(Self.fraction(move % 1000)),"y":\#(Self.fraction(move / 1000 % 1000)),"activity":"drag"}"#)
    }

    /// n/1000 as JSON, "0.007" for 7.
    private static func fraction(_ thousandths: Int) -> String {
        let digits = String(thousandths)
        return "0." + String(repeating: "0", count: 3 - digits.count) + digits
    }

    /// Must hold `lock`.
    private func summary() -> PointerResult {
        var final = result
        final.seconds = Double(windowEnd - windowStart) / 1e9
        let receivers = clients.filter(\.welcomed)
        guard !receivers.isEmpty, final.seconds > 0 else { return final }
        let batchRates = receivers.map { Double($0.arrivals.count) / final.seconds }
        let byteRates = receivers.map { Double($0.bytes) / final.seconds }
        final.batchesPerSecond = (batchRates.reduce(0, +) / Double(receivers.count), batchRates.max() ?? 0)
        final.bytesPerSecond = (byteRates.reduce(0, +) / Double(receivers.count), byteRates.max() ?? 0)
        final.maxBatchesInOneSecond = receivers.map { Self.maxInOneSecond($0.arrivals) }.max() ?? 0
        let aligned = receivers.map(\.arrivals.count).min() ?? 0
        let firstArrivals = (0..<aligned).map { k in receivers.map { $0.arrivals[k] }.min() ?? 0 }
        final.maxBatchesInOneSecondFirstArrivals = Self.maxInOneSecond(firstArrivals)
        final.shortestSpanOfCeilingIntervalsFirstArrivals =
            Self.shortestSpan(of: ceiling, in: firstArrivals).map { Double($0) / 1e6 } ?? 0
        let spans = receivers.compactMap { Self.shortestSpan(of: ceiling, in: $0.arrivals) }
        final.shortestSpanOfCeilingIntervals = spans.min().map { Double($0) / 1e6 } ?? 0
        let seen = receivers.map { $0.seen.filter { $0 }.count }
        final.moversSeen = (Double(seen.reduce(0, +)) / Double(receivers.count), seen.min() ?? 0)
        final.p50 = histogram.percentile(0.50)
        final.p99 = histogram.percentile(0.99)
        final.maxLatency = Double(histogram.maxMicros) / 1000
        return final
    }

    /// The most arrivals in any window [t, t + 1 s).
    private static func maxInOneSecond(_ arrivals: [UInt64]) -> Int {
        var best = 0, first = 0
        for last in arrivals.indices {
            while arrivals[last] - arrivals[first] >= 1_000_000_000 { first += 1 }
            best = max(best, last - first + 1)
        }
        return best
    }

    /// The shortest time between arrival i and arrival i + `intervals`.
    private static func shortestSpan(of intervals: Int, in arrivals: [UInt64]) -> UInt64? {
        guard arrivals.count > intervals else { return nil }
        return (intervals..<arrivals.count).map { arrivals[$0] - arrivals[$0 - intervals] }.min()
    }

    // MARK: loop thread

    func webSocketDidOpen(_ connection: WebSocketConnection, subprotocol: String?) {}

    func webSocket(_ connection: WebSocketConnection, didReceive bytes: UnsafeRawBufferPointer, binary: Bool) {
        guard bytes.count > 12 else { return }
        let arrived = Self.now()
        lock.lock(); defer { lock.unlock() }
        guard let index = indexOf[ObjectIdentifier(connection)] else { return }
        // Messages start with {"type":"<t>..., the server writes "type" first.
        switch (bytes[9], bytes[10]) {
        case (UInt8(ascii: "p"), UInt8(ascii: "o")):
            // Only while the clients move: once they stop, the changes left
            // over trickle out a batch at a time, older by 50 ms each, which
            // the steady state never shows.
            guard moving else { return }
            clients[index].arrivals.append(arrived)
            clients[index].bytes += bytes.count
            matchEntries(in: bytes, receiver: index, arrived: arrived)
        case (UInt8(ascii: "w"), _):
            guard let id = Self.string(after: Self.youIDKey, in: bytes, from: 0) else { result.errors += 1; return }
            clients[index].id = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[id]), as: UTF8.self)
            clients[index].welcomed = true
            moverOf[Self.hash(bytes, id)] = index
            welcomed += 1
            lock.broadcast()
        case (UInt8(ascii: "e"), UInt8(ascii: "r")), (UInt8(ascii: "r"), UInt8(ascii: "e")):
            result.errors += 1
        default:
            break
        }
    }

    func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16?, reason: String) {}

    func webSocketDidFail(_ connection: WebSocketConnection, error: String) {}

    private static let youIDKey = Array(#""you":{"id":""#.utf8)
    private static let entryKey = Array(#"{"id":""#.utf8)
    private static let xKey = Array(#""x":"#.utf8)
    private static let yKey = Array(#""y":"#.utf8)

    /// Must hold `lock`. Each entry {"id":…,"name":…,"view":…,"x":…,"y":…}
    /// is matched to the move of that id at that position.
    private func matchEntries(in bytes: UnsafeRawBufferPointer, receiver: Int, arrived: UInt64) {
        var position = 0
        while let id = Self.string(after: Self.entryKey, in: bytes, from: position) {
            position = id.upperBound
            guard let xAt = Self.find(Self.xKey, in: bytes, from: position),
                  let (x, afterX) = Self.number(in: bytes, at: xAt),
                  let yAt = Self.find(Self.yKey, in: bytes, from: afterX),
                  let (y, afterY) = Self.number(in: bytes, at: yAt) else { result.entriesUnmatched += 1; return }
            position = afterY
            guard let mover = moverOf[Self.hash(bytes, id)] else { result.entriesUnmatched += 1; continue }
            if mover == receiver { result.ownEntries += 1; continue }
            let move = Int((x * 1000).rounded()) + 1000 * Int((y * 1000).rounded())
            let sent = clients[mover].sendTimes
            guard move >= 0, move < sent.count, arrived >= sent[move] else { result.entriesUnmatched += 1; continue }
            histogram.add(nanoseconds: arrived - sent[move])
            result.entriesMatched += 1
            clients[receiver].seen[mover] = true
        }
    }

    /// FNV-1a of the bytes in `range`.
    private static func hash(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> UInt64 {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        for index in range {
            value = (value ^ UInt64(bytes[index])) &* 0x100_0000_01b3
        }
        return value
    }

    /// The index just past the first `key` at or after `start`.
    private static func find(_ key: [UInt8], in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard bytes.count >= key.count else { return nil }
        var index = start
        let limit = bytes.count - key.count
        outer: while index <= limit {
            for offset in 0..<key.count where bytes[index + offset] != key[offset] {
                index += 1
                continue outer
            }
            return index + key.count
        }
        return nil
    }

    /// The characters of the (unescaped) string that follows `key`.
    private static func string(after key: [UInt8], in bytes: UnsafeRawBufferPointer, from start: Int) -> Range<Int>? {
        guard let begin = find(key, in: bytes, from: start) else { return nil }
        var end = begin
        while end < bytes.count, bytes[end] != UInt8(ascii: "\"") { end += 1 }
        return end < bytes.count ? begin..<end : nil
    }

    /// A JSON number at `start` and the index after it.
    private static func number(in bytes: UnsafeRawBufferPointer, at start: Int) -> (Double, Int)? {
        var index = start
        var mantissa = 0.0, exponent = 0, digits = 0
        var negative = false
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { negative = true; index += 1 }
        func isDigit(_ at: Int) -> Bool { at < bytes.count && bytes[at] >= 0x30 && bytes[at] <= 0x39 }
        while isDigit(index) { mantissa = mantissa * 10 + Double(bytes[index] - 0x30); index += 1; digits += 1 }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            while isDigit(index) {
                mantissa = mantissa * 10 + Double(bytes[index] - 0x30)
                exponent -= 1
                index += 1
                digits += 1
            }
        }
        guard digits > 0 else { return nil }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            var sign = 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
                sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
                index += 1
            }
            var power = 0
            while isDigit(index) { power = power * 10 + Int(bytes[index] - 0x30); index += 1 }
            exponent += sign * power
        }
        let value = mantissa * pow(10, Double(exponent))
        return (negative ? -value : value, index)
    }
}
