/// `LWSWriteBuffer`: a reusable buffer with lws's write headroom in front,
/// for payloads that do not already live in one (lws writes its frame
/// header into the bytes before the payload).

/// `capacity` bytes of payload space after `LWSConnection.writeHeadroom`
/// bytes of headroom, allocated once.
public final class LWSWriteBuffer {
    /// Where the payload starts (the headroom lies before it).
    public let payload: UnsafeMutablePointer<UInt8>
    /// Payload bytes the buffer holds.
    public let capacity: Int
    private let storage: UnsafeMutablePointer<UInt8>

    public init(capacity: Int) {
        self.capacity = capacity
        storage = .allocate(capacity: LWSConnection.writeHeadroom + capacity)
        payload = storage + LWSConnection.writeHeadroom
    }

    deinit {
        storage.deallocate()
    }

    /// Copies `bytes` behind headroom (this buffer, or a temporary one when
    /// they do not fit) and writes them to `connection`. Returns what
    /// `LWSConnection.write` returns.
    public func write(_ bytes: UnsafeRawBufferPointer, to connection: LWSConnection, mode: WriteMode,
                      endsMessage: Bool = true) -> Int {
        if bytes.count <= capacity {
            if let base = bytes.baseAddress { UnsafeMutableRawPointer(payload).copyMemory(from: base, byteCount: bytes.count) }
            return connection.write(payload, count: bytes.count, mode: mode, endsMessage: endsMessage)
        }
        let headroom = LWSConnection.writeHeadroom
        let padded = UnsafeMutablePointer<UInt8>.allocate(capacity: headroom + bytes.count)
        defer { padded.deallocate() }
        UnsafeMutableRawPointer(padded + headroom).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        return connection.write(padded + headroom, count: bytes.count, mode: mode, endsMessage: endsMessage)
    }
}
