import HappyCore
import HappyRender

/// One `GET /stream/{view}.png` client: a `multipart/x-mixed-replace`
/// response that gets a new PNG part whenever what its view shows changes.
/// It holds at most the part being written and one pending part; a newer
/// frame replaces the pending one (conflation), so a slow reader costs two
/// frames of memory at most. Owned by the service thread.
final class FrameStream {
    static let boundary = "happyframe"
    static let contentType = "multipart/x-mixed-replace; boundary=\(boundary)"
    static let closingBoundary = Array("--\(boundary)--\r\n".utf8)

    let exchange: HTTPExchange
    let runtime: RoomRuntime
    let view: FrameView
    let width: Int
    let height: Int
    /// Seconds between wave frames (1 / fps).
    let waveInterval: Double

    var headersSent = false
    /// What the newest requested frame shows (`FrameState.relevant(to:)`).
    var shown: FrameState?
    /// Numbers requests, so a frame that finishes after a newer one is dropped.
    var requestSerial: UInt64 = 0
    var deliveredSerial: UInt64 = 0
    private(set) var writing: MultipartPart?
    private(set) var pending: MultipartPart?
    var nextWaveAt: Double
    /// When writing last made progress (for the write timeout).
    var stalledSince: Double
    /// Finishing: the part in progress, then the closing boundary, then close.
    var ending = false
    var closingSent = false
    /// The client hung up: the connection closes at its next writable callback.
    private(set) var clientHasLeft = false

    init(exchange: HTTPExchange, runtime: RoomRuntime, query: FrameQuery, now: Double) {
        self.exchange = exchange
        self.runtime = runtime
        view = query.view
        width = query.width
        height = query.height
        waveInterval = 1 / Double(query.fps)
        nextWaveAt = now + waveInterval
        stalledSince = now
    }

    var animates: Bool { view.animates }
    var hasWork: Bool { !headersSent || writing != nil || ending }
    /// A frame is waiting behind the one being written: the client reads slowly.
    var isBehind: Bool { pending != nil }

    /// Queues a frame; returns true when it replaced one not yet started.
    @discardableResult
    func enqueue(_ png: [UInt8], now: Double) -> Bool {
        let part = MultipartPart(png: png)
        if writing == nil {
            writing = part
            stalledSince = now
            return false
        }
        let replaced = pending != nil
        pending = part
        return replaced
    }

    /// Copies the next bytes of the part in progress into `buffer`, moving on
    /// to the pending part when one is finished.
    func nextChunk(into buffer: UnsafeMutablePointer<UInt8>, capacity: Int) -> (count: Int, finishedPart: Bool) {
        guard var part = writing else { return (0, false) }
        let count = part.copy(into: buffer, capacity: capacity)
        guard part.isFinished else {
            writing = part
            return (count, false)
        }
        writing = ending ? nil : pending
        pending = nil
        return (count, true)
    }

    func clientLeft() {
        clientHasLeft = true
    }

    /// Drops the pending part: only the one in progress is finished.
    func beginEnding() {
        ending = true
        pending = nil
    }
}

/// One part of the multipart body: `--happyframe`, its headers, the PNG, CRLF.
struct MultipartPart {
    private let head: [UInt8]
    private let png: [UInt8]
    private static let tail: [UInt8] = [0x0D, 0x0A]
    private var offset = 0

    init(png: [UInt8]) {
        head = Array("--\(FrameStream.boundary)\r\nContent-Type: image/png\r\nContent-Length: \(png.count)\r\n\r\n".utf8)
        self.png = png
    }

    var totalCount: Int { head.count + png.count + Self.tail.count }
    var isFinished: Bool { offset >= totalCount }

    /// Copies up to `capacity` of the remaining bytes; returns how many.
    mutating func copy(into buffer: UnsafeMutablePointer<UInt8>, capacity: Int) -> Int {
        var written = 0
        let segments = [(bytes: head, start: 0), (bytes: png, start: head.count),
                        (bytes: Self.tail, start: head.count + png.count)]
        for segment in segments where written < capacity && offset < segment.start + segment.bytes.count {
            let from = offset - segment.start
            let count = min(segment.bytes.count - from, capacity - written)
            segment.bytes.withUnsafeBufferPointer { bytes in
                (buffer + written).update(from: bytes.baseAddress! + from, count: count)
            }
            written += count
            offset += count
        }
        return written
    }
}
