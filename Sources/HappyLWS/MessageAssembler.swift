/// `MessageAssembler`: puts a WebSocket message back together from the
/// chunks lws hands over in RECEIVE callbacks (a long frame arrives in
/// pieces of the rx buffer size, a fragmented message in several frames).
///
/// A message that arrives in one chunk, the common case, is passed through
/// without a copy. Pure value type, no lws calls: the caller feeds it
/// `LWSConnection.isBinaryFrame` and `LWSConnection.endsMessage`.

/// Gathers the chunks of one message at a time, up to `limit` bytes.
public struct MessageAssembler {
    /// Largest message accepted, in bytes.
    public let limit: Int
    @usableFromInline var gathered: [UInt8] = []
    @usableFromInline var inProgress = false
    @usableFromInline var gatheredIsBinary = false
    /// The rest of a message found too big is being skipped.
    @usableFromInline var skipping = false

    public init(limit: Int) {
        self.limit = limit
    }

    /// What one chunk did.
    public enum Progress {
        /// The message goes on in later chunks.
        case needsMore
        /// The message is over `limit`: what was gathered is dropped, and
        /// its remaining chunks are skipped (each reported as `needsMore`).
        case tooBig
        /// The message is whole.
        case complete(AssembledMessage)
    }

    /// Whether part of a message is waiting for the rest.
    @inlinable
    public var isAssembling: Bool { inProgress }

    /// Bytes gathered of the message in progress.
    @inlinable
    public var gatheredCount: Int { gathered.count }

    /// Takes one chunk. `isBinary` is read for the first chunk of a message
    /// (a continuation frame carries no type of its own); `endsMessage` says
    /// the chunk is the message's last. A `complete` message made of this
    /// chunk alone points into `chunk`, so it is valid as long as `chunk` is.
    @inlinable
    public mutating func add(_ chunk: UnsafeRawBufferPointer, isBinary: Bool, endsMessage: Bool) -> Progress {
        if !inProgress {
            guard !skipping else {
                skipping = !endsMessage
                return .needsMore
            }
            guard chunk.count <= limit else { return tooBig(endsMessage: endsMessage) }
            if endsMessage { return .complete(AssembledMessage(chunk: chunk, isBinary: isBinary)) }
            inProgress = true
            gatheredIsBinary = isBinary
        } else if gathered.count + chunk.count > limit {
            return tooBig(endsMessage: endsMessage)
        }
        gathered.append(contentsOf: chunk)
        guard endsMessage else { return .needsMore }
        let message = AssembledMessage(gathered: gathered, isBinary: gatheredIsBinary)
        reset()
        return .complete(message)
    }

    /// Drops the message in progress (and its memory); the next chunk starts a new message.
    @inlinable
    public mutating func reset() {
        gathered = []
        inProgress = false
        gatheredIsBinary = false
        skipping = false
    }

    @inlinable
    mutating func tooBig(endsMessage: Bool) -> Progress {
        reset()
        skipping = !endsMessage
        return .tooBig
    }
}

/// A whole message from `MessageAssembler`: either the one chunk it came in
/// (borrowed) or the chunks gathered (owned).
public struct AssembledMessage {
    public let isBinary: Bool
    @usableFromInline let chunk: UnsafeRawBufferPointer?
    @usableFromInline let gathered: [UInt8]

    @inlinable
    init(chunk: UnsafeRawBufferPointer, isBinary: Bool) {
        self.chunk = chunk
        gathered = []
        self.isBinary = isBinary
    }

    @inlinable
    init(gathered: [UInt8], isBinary: Bool) {
        chunk = nil
        self.gathered = gathered
        self.isBinary = isBinary
    }

    /// The message's length in bytes.
    @inlinable
    public var count: Int { chunk?.count ?? gathered.count }

    /// Runs `body` with the message's bytes (valid only during the call).
    @inlinable
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        if let chunk { return try body(chunk) }
        return try gathered.withUnsafeBytes(body)
    }

    /// Runs `body` with the message's bytes as `UInt8`s (valid only during the call).
    @inlinable
    public func withUnsafeBufferPointer<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        if let chunk { return try body(chunk.assumingMemoryBound(to: UInt8.self)) }
        return try gathered.withUnsafeBufferPointer(body)
    }

    /// A copy of the bytes.
    public var bytes: [UInt8] {
        chunk.map { Array($0) } ?? gathered
    }
}
