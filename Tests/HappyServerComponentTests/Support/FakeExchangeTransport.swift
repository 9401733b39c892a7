@testable import HappyServer

/// An HTTP exchange's transport that records the response: the head the
/// server laid out, the body bytes written after it, and whether the
/// response was ended, kept open (streams) or killed.
final class FakeExchangeTransport: ExchangeTransport {
    var writablePending = false
    private(set) var writableRequests = 0
    /// The status line and headers, once written.
    private(set) var head: HTTPResponseHead?
    private(set) var headWrites = 0
    /// Everything written after the head.
    private(set) var body: [UInt8] = []
    private(set) var writeCount = 0
    /// A write marked the end of the response.
    private(set) var finalWritten = false
    private(set) var keptOpenWithoutTimeout = false
    private(set) var sendBufferLimits: [Int32] = []
    private(set) var kills = 0
    /// The peer went away while nothing was being read (the sweep asks).
    var peerHasHungUp = false
    var failWrites = false
    /// Bytes at the front of the next write that are the head's text.
    private var headBytesPending = 0

    func requestWritable() {
        writableRequests += 1
        writablePending = true
    }

    func write(_ bytes: UnsafeMutablePointer<UInt8>, count: Int, final: Bool) -> Bool {
        guard !failWrites else { return false }
        writeCount += 1
        let written = Array(UnsafeBufferPointer(start: bytes, count: count))
        body.append(contentsOf: written.dropFirst(min(headBytesPending, count)))
        headBytesPending = 0
        if final { finalWritten = true }
        return true
    }

    /// Lays out a plain text head, as the real transport lays out its own.
    func writeHeaders(_ head: HTTPResponseHead, into cursor: inout UnsafeMutablePointer<UInt8>?,
                      end: UnsafeMutablePointer<UInt8>) -> Bool {
        var text = "HTTP/1.1 \(head.status)\r\ncache-control: \(head.cacheControl)\r\n"
        if let contentType = head.contentType { text += "content-type: \(contentType)\r\n" }
        if let contentLength = head.contentLength { text += "content-length: \(contentLength)\r\n" }
        if head.close { text += "connection: close\r\n" }
        for header in head.headers { text += "\(header.name.lowercased()): \(header.value)\r\n" }
        text += "\r\n"
        let bytes = Array(text.utf8)
        guard let start = cursor, end - start >= bytes.count else { return false }
        start.update(from: bytes, count: bytes.count)
        cursor = start + bytes.count
        headBytesPending += bytes.count
        self.head = head
        headWrites += 1
        return true
    }

    func keepOpenWithoutTimeout() {
        keptOpenWithoutTimeout = true
    }

    func limitSendBuffer(bytes: Int32) -> Bool {
        sendBufferLimits.append(bytes)
        return true
    }

    func kill() {
        kills += 1
    }

    /// A response header by name (case-insensitive).
    func header(_ name: String) -> String? {
        head?.headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}
