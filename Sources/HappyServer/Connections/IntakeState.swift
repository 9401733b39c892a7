import HappyCore
import HappyLWS

/// What a connection's intake keeps between messages: the message being
/// reassembled, messages that arrived before the welcome, and the rate
/// limit's bucket and flood meter. Owned by `MessageIntake`.
struct IntakeState {
    static let maxEarlyMessages = 32
    /// Autobahn's largest messages are 16 MiB.
    static let echoMessageLimit = 16 * 1024 * 1024 + 1024

    private(set) var assembler: MessageAssembler
    /// Messages that arrived before the welcome (the room was still loading).
    private(set) var early: [[UInt8]] = []
    private(set) var bucket: TokenBucket
    private(set) var flood: FloodMeter
    /// Messages refused by the rate limit (the operator API shows them).
    private(set) var rateLimited = 0
    /// The frames against the socket's byte count (masking, control floods).
    private(set) var wire: WireMeter

    init(kind: Connection.Kind, limits: HappyConfig.LimitsSection, now: Double, bytesRead: Int64? = nil,
         compressed: Bool = false) {
        assembler = MessageAssembler(limit: kind == .echo ? Self.echoMessageLimit : limits.maxMessageBytes)
        bucket = TokenBucket(ratePerSecond: limits.intentsPerSecond, burst: limits.intentBurst, now: now)
        flood = FloodMeter(limit: limits.floodLimit)
        wire = WireMeter(bytesRead: bytesRead, compressed: compressed, now: now)
    }

    /// A chunk of a data frame arrived; `frameEnds` when none of the frame is left.
    mutating func wireReceived(_ count: Int, frameEnds: Bool) {
        wire.received(count, frameEnds: frameEnds)
    }

    /// The frames so far against `bytesRead`, the socket's count now.
    mutating func checkWire(bytesRead: Int64?, now: Double) -> WireMeter.Verdict {
        wire.check(bytesRead: bytesRead, now: now)
    }

    var messageLimit: Int { assembler.limit }

    /// One received chunk of a message.
    mutating func assemble(_ chunk: UnsafeBufferPointer<UInt8>, binary: Bool, final: Bool) -> MessageAssembler.Progress {
        assembler.add(UnsafeRawBufferPointer(chunk), isBinary: binary, endsMessage: final)
    }

    /// Drops the message in progress (the connection is closing).
    mutating func dropPartialMessage() {
        assembler.reset()
    }

    /// Keeps a message until the welcome; false when too many wait already.
    mutating func holdUntilWelcome(_ message: [UInt8]) -> Bool {
        guard early.count < Self.maxEarlyMessages else { return false }
        early.append(message)
        return true
    }

    mutating func takeEarlyMessages() -> [[UInt8]] {
        defer { early = [] }
        return early
    }

    /// One token for a message; false when over the rate limit.
    mutating func takeToken(now: Double) -> Bool {
        bucket.take(now: now)
    }

    /// A message refused by the rate limit; true once that is a flood.
    mutating func recordRefusal(now: Double) -> Bool {
        rateLimited += 1
        return flood.record(now: now)
    }
}
