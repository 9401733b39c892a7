/// Holds a WebSocket client's frames to what RFC 6455 requires of them, from
/// what its socket carried: libwebsockets 4.1 accepts a client frame without
/// a mask key, and answers pings itself without telling anyone, so neither
/// shows in its callbacks. The socket's byte count does: every data frame a
/// client masks took at least its payload, its header and the 4-byte key,
/// so fewer bytes read than that means a frame came unmasked; and bytes read
/// beyond the frames handed over are control frames (or a frame still
/// arriving), which a budget keeps from flooding the server.
///
/// Both checks only ever err towards letting a client through: the socket's
/// count never reads low. Under TLS the record overhead covers a missing key
/// (not caught there), and with permessage-deflate payloads arrive inflated,
/// so masking is not checked and the inflation is allowance for control frames.
struct WireMeter {
    /// Control-frame bytes allowed per second on top of `burstBytes`: a client
    /// pinging every second, pongs and a close come to a few hundred.
    static let bytesPerSecond = 16 * 1024
    /// Control-frame bytes allowed at once (and a frame still arriving).
    static let burstBytes: Int64 = 64 * 1024

    enum Verdict: Equatable {
        case fine
        /// Fewer bytes came than the frames handed over need masked.
        case unmaskedFrame
        /// More bytes came than the frames explain, beyond the budget.
        case controlFlood
    }

    /// Bytes read before the first frame (the handshake); nil: the socket gives no count.
    private var baseline: Int64?
    private let checksMasking: Bool
    /// The least bytes the data frames handed over took on the wire.
    private var framed: Int64 = 0
    /// Payload bytes of the frame in progress.
    private var framePayload: Int64 = 0
    /// Budget state: when it was last refilled, and how much is left.
    private var budget = Double(WireMeter.burstBytes)
    private var budgetAt: Double
    /// Unexplained bytes at the last check.
    private var unexplainedBefore: Int64 = 0
    /// When the socket was last asked (checks at message ends are spaced out).
    private(set) var checkedAt: Double?

    /// `bytesRead`: what the socket had carried when the WebSocket opened.
    init(bytesRead: Int64?, compressed: Bool, now: Double) {
        baseline = bytesRead
        checksMasking = !compressed
        budgetAt = now
    }

    /// Whether the socket is due a look: never looked at yet, or `seconds` ago.
    func isDue(now: Double, every seconds: Double) -> Bool {
        checkedAt.map { now - $0 >= seconds } ?? true
    }

    /// A chunk of a data frame's payload; `frameEnds` when none of the frame is left.
    mutating func received(_ count: Int, frameEnds: Bool) {
        framePayload += Int64(count)
        guard frameEnds else { return }
        framed += framePayload + Self.headerBytes(payload: framePayload)
        framePayload = 0
    }

    /// Compares `bytesRead` (the socket's count now) with the frames so far.
    mutating func check(bytesRead: Int64?, now: Double) -> Verdict {
        checkedAt = now
        guard let baseline, let bytesRead else { return .fine }
        let unexplained = bytesRead - baseline - framed - framePayload
        if checksMasking && framePayload == 0 && unexplained < 0 { return .unmaskedFrame }
        budget = min(Double(Self.burstBytes), budget + (now - budgetAt) * Double(Self.bytesPerSecond))
        budgetAt = now
        let grown = max(0, unexplained) - max(0, unexplainedBefore)
        unexplainedBefore = unexplained
        budget -= Double(max(0, grown))
        return budget < 0 ? .controlFlood : .fine
    }

    /// A masked client frame's header: 2 bytes, the extended length, the 4-byte key.
    static func headerBytes(payload: Int64) -> Int64 {
        2 + (payload >= 65_536 ? 8 : payload >= 126 ? 2 : 0) + 4
    }
}
