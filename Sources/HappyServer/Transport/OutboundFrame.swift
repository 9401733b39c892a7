import HappyCore
import HappyLWS

/// One encoded server message, framed once as an unmasked WebSocket text
/// frame and shared by every receiver. The bytes are laid out as
/// `[LWS_PRE headroom | frame header | JSON payload]`, the header sitting
/// right before the payload, so the frame can go out either through lws's
/// own framing (`lws_write` TEXT, payload pointer) or pre-framed and
/// coalesced with others (the whole frame, header included).
final class OutboundFrame {
    static let headroom = LWSConnection.writeHeadroom

    /// Headroom, header and payload in one allocation, written by lws in
    /// place (its header goes into the headroom) and freed with the frame.
    private let storage: UnsafeMutablePointer<UInt8>
    private let count: Int
    let payloadLength: Int
    let headerLength: Int
    /// The event's seq for events, 0 otherwise.
    let seq: UInt64

    let isBinary: Bool
    /// A tick's summary, kept to merge it with the next tick for a client
    /// that wrote neither yet (boxed: most frames are not ticks).
    private let tickSummary: TickSummaryBox?

    /// `encoded` must carry `OutboundFrame.headroom` bytes before the payload.
    init(encoded: [UInt8], seq: UInt64 = 0, binary: Bool = false) {
        precondition(encoded.count >= Self.headroom)
        count = encoded.count
        storage = .allocate(capacity: count)
        storage.initialize(from: encoded, count: count)
        payloadLength = count - Self.headroom
        self.seq = seq
        isBinary = binary
        tickSummary = nil
        headerLength = Self.writeHeader(into: storage, payloadLength: payloadLength, opcode: binary ? 0x82 : 0x81)
    }

    /// A `tick` message, encoded once, that keeps its summary.
    init(tick: TickSummary) {
        let encoded = ServerMessageEncoder.tick(tick, headroom: Self.headroom)
        count = encoded.count
        storage = .allocate(capacity: count)
        storage.initialize(from: encoded, count: count)
        payloadLength = count - Self.headroom
        seq = tick.seq
        isBinary = false
        tickSummary = TickSummaryBox(tick)
        headerLength = Self.writeHeader(into: storage, payloadLength: payloadLength, opcode: 0x81)
    }

    var isTick: Bool { tickSummary != nil }
    /// The summary of a tick message; nil for any other.
    var tick: TickSummary? { tickSummary?.summary }

    deinit {
        storage.deallocate()
    }

    /// A frame holding a copy of `payload` (stored events, echoes).
    convenience init<C: Collection>(payload: C, seq: UInt64 = 0, binary: Bool = false) where C.Element == UInt8 {
        var encoded = [UInt8](repeating: 0, count: Self.headroom)
        encoded.reserveCapacity(Self.headroom + payload.count)
        encoded.append(contentsOf: payload)
        self.init(encoded: encoded, seq: seq, binary: binary)
    }

    var frameStart: Int { Self.headroom - headerLength }
    var frameLength: Int { headerLength + payloadLength }
    /// Bytes this frame costs a client's outbox.
    var queuedSize: Int { payloadLength + 64 }

    /// A copy of the JSON payload (for the store).
    var payload: [UInt8] { Array(UnsafeBufferPointer(start: storage + Self.headroom, count: payloadLength)) }

    /// The payload, with `headroom` writable bytes before it (lws's own framing).
    var payloadStart: UnsafeMutablePointer<UInt8> { storage + Self.headroom }

    /// The whole pre-framed frame, header included.
    var frameBytes: UnsafeMutablePointer<UInt8> { storage + frameStart }

    /// Writes a FIN frame header ending at the headroom boundary.
    private static func writeHeader(into bytes: UnsafeMutablePointer<UInt8>, payloadLength: Int, opcode: UInt8) -> Int {
        let end = headroom
        if payloadLength < 126 {
            bytes[end - 2] = opcode
            bytes[end - 1] = UInt8(payloadLength)
            return 2
        } else if payloadLength <= 0xFFFF {
            bytes[end - 4] = opcode
            bytes[end - 3] = 126
            bytes[end - 2] = UInt8(payloadLength >> 8)
            bytes[end - 1] = UInt8(payloadLength & 0xFF)
            return 4
        } else {
            bytes[end - 10] = opcode
            bytes[end - 9] = 127
            var length = UInt64(payloadLength)
            for index in stride(from: end - 1, through: end - 8, by: -1) {
                bytes[index] = UInt8(length & 0xFF)
                length >>= 8
            }
            return 10
        }
    }
}

private final class TickSummaryBox {
    let summary: TickSummary

    init(_ summary: TickSummary) {
        self.summary = summary
    }
}
