import HappyCore
@testable import HappyServer

/// One WebSocket frame as a client would read it off the wire.
struct WebSocketFrame: Equatable {
    static let text: UInt8 = 0x1
    static let binary: UInt8 = 0x2
    static let close: UInt8 = 0x8
    static let ping: UInt8 = 0x9

    var opcode: UInt8
    var payload: [UInt8]

    var isText: Bool { opcode == Self.text }
    var isClose: Bool { opcode == Self.close }
    var isPing: Bool { opcode == Self.ping }

    /// The JSON of a text frame.
    var json: JSONValue? {
        guard isText else { return nil }
        return try? JSONParser.parse(payload)
    }

    /// The status code of a close frame.
    var closeCode: UInt16? {
        guard isClose, payload.count >= 2 else { return nil }
        return UInt16(payload[0]) << 8 | UInt16(payload[1])
    }

    /// The reason of a close frame.
    var closeReason: String? {
        guard isClose, payload.count >= 2 else { return nil }
        return String(decoding: payload.dropFirst(2), as: UTF8.self)
    }

    /// Splits the bytes of one pre-framed write into its frames: server
    /// frames are unmasked and final, with a 7-, 16- or 64-bit length.
    static func decode(_ bytes: [UInt8]) -> [WebSocketFrame]? {
        var frames: [WebSocketFrame] = []
        var index = 0
        while index < bytes.count {
            guard index + 2 <= bytes.count else { return nil }
            let first = bytes[index], second = bytes[index + 1]
            // FIN set, no reserved bits, no mask: what the server writes.
            guard first & 0xF0 == 0x80, second & 0x80 == 0 else { return nil }
            index += 2
            var length = Int(second & 0x7F)
            if length == 126 {
                guard index + 2 <= bytes.count else { return nil }
                length = Int(bytes[index]) << 8 | Int(bytes[index + 1])
                index += 2
            } else if length == 127 {
                guard index + 8 <= bytes.count else { return nil }
                length = bytes[index..<index + 8].reduce(0) { $0 << 8 | Int($1) }
                index += 8
            }
            guard index + length <= bytes.count else { return nil }
            frames.append(WebSocketFrame(opcode: first & 0x0F, payload: Array(bytes[index..<index + length])))
            index += length
        }
        return frames
    }
}

/// A WebSocket connection's transport that records what the server asked
/// of it: writable callbacks, the frames written (pre-framed writes are
/// decoded back into frames, several per write when coalesced), reading
/// paused and resumed, the close-acknowledgement wait, kills.
final class FakeConnectionTransport: ConnectionTransport {
    /// One call to `write`.
    struct Write {
        var kind: TransportWrite
        var bytes: [UInt8]
        var frames: [WebSocketFrame]
    }

    /// A writable callback was asked for and has not run yet.
    var writablePending = false
    private(set) var writableRequests = 0
    private(set) var writes: [Write] = []
    private(set) var pauses = 0
    private(set) var resumes = 0
    private(set) var closeAckWaits: [Int32] = []
    private(set) var kills = 0
    /// Pre-framed bytes that did not decode as whole server frames.
    private(set) var malformedWrites = 0
    /// Makes every write fail, as a broken connection's would.
    var failWrites = false
    /// Pretends an earlier write is still partly buffered.
    var bufferedOutput = false
    /// What the socket reports having carried; nil: it gives no count (the wire checks stand aside).
    var bytesRead: Int64?
    var hasBufferedOutput: Bool { bufferedOutput }

    var readingPaused: Bool { pauses > resumes }
    var frames: [WebSocketFrame] { writes.flatMap(\.frames) }
    var textFrames: [WebSocketFrame] { frames.filter(\.isText) }
    var closeFrame: WebSocketFrame? { frames.first(where: \.isClose) }

    func requestWritable() {
        writableRequests += 1
        writablePending = true
    }

    func write(_ bytes: UnsafeMutablePointer<UInt8>, count: Int, as kind: TransportWrite) -> Bool {
        guard !failWrites else { return false }
        let copy = Array(UnsafeBufferPointer(start: bytes, count: count))
        let frames: [WebSocketFrame]
        switch kind {
        case .preframed:
            if let decoded = WebSocketFrame.decode(copy) {
                frames = decoded
            } else {
                malformedWrites += 1
                frames = []
            }
        case .text: frames = [WebSocketFrame(opcode: WebSocketFrame.text, payload: copy)]
        case .binary: frames = [WebSocketFrame(opcode: WebSocketFrame.binary, payload: copy)]
        case .ping: frames = [WebSocketFrame(opcode: WebSocketFrame.ping, payload: copy)]
        }
        writes.append(Write(kind: kind, bytes: copy, frames: frames))
        return true
    }

    func pauseReading() {
        pauses += 1
    }

    func resumeReading() {
        resumes += 1
    }

    func awaitCloseAcknowledgement(seconds: Int32) {
        closeAckWaits.append(seconds)
    }

    func kill() {
        kills += 1
    }
}
