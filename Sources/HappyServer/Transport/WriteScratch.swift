/// One write's worth of bytes, owned by one component, with the transport's
/// headroom in front: lws writes its own framing into the bytes before the
/// buffer it is given, on WebSocket and HTTP connections alike.
final class WriteScratch {
    let capacity: Int
    /// The first byte of the buffer, `OutboundFrame.headroom` bytes into the allocation.
    let start: UnsafeMutablePointer<UInt8>
    private let allocation: UnsafeMutablePointer<UInt8>

    init(capacity: Int) {
        self.capacity = capacity
        allocation = .allocate(capacity: OutboundFrame.headroom + capacity)
        start = allocation + OutboundFrame.headroom
    }

    deinit {
        allocation.deallocate()
    }

    var end: UnsafeMutablePointer<UInt8> { start + capacity }
}
