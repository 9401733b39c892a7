/// Answering HTTP requests: a status-only answer, response headers written
/// into a buffer ahead of the body, and the end of a transaction.
internal import CWebSockets

extension LWSConnection {
    /// Answers the request with `status` and a short HTML page saying
    /// `message` (also how a WebSocket upgrade is refused before the
    /// handshake). False when the answer could not be written: close.
    public func returnHTTPStatus(_ status: Int, message: String) -> Bool {
        lws_return_http_status(wsi, UInt32(status), message) == 0
    }

    /// Writes a response's status line and headers from `start`, up to
    /// `end`; lws adds the protocol-level ones. Order: status,
    /// `cache-control`, `content-type`, `content-length`, `connection: close`
    /// when `closeConnection`, then `headers` (names lower-cased). Without a
    /// content length the body ends when the connection closes. Returns
    /// where the headers end (the body goes there), or nil when they do not
    /// fit. `start` must have `writeHeadroom` bytes before it, as for `write`.
    public func writeResponseHeaders(status: Int, contentType: String?, contentLength: Int?,
                                     cacheControl: String?, closeConnection: Bool,
                                     headers: [(name: String, value: String)],
                                     from start: UnsafeMutablePointer<UInt8>,
                                     end: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8>? {
        var writer = HTTPHeaderWriter(self, start: start, end: end)
        guard writer.addStatus(status) else { return nil }
        if let cacheControl, !writer.add(.cacheControl, cacheControl) { return nil }
        if let contentType, !writer.add(.contentType, contentType) { return nil }
        if let contentLength, !writer.add(.contentLength, String(contentLength)) { return nil }
        if closeConnection, !writer.add(.connection, "close") { return nil }
        for header in headers {
            guard writer.add(name: header.name, value: header.value) else { return nil }
        }
        guard writer.finish() else { return nil }
        return writer.position
    }

    /// Answers before any route has the request (from `filterHTTPConnection`),
    /// with `Connection: close`: the caller then returns nonzero, and the
    /// connection closes once the answer is out. False when it could not be written.
    public func answerAndClose(status: Int, contentType: String, body: [UInt8],
                               headers: [(name: String, value: String)]) -> Bool {
        let headroom = LWSConnection.writeHeadroom
        let capacity = 2048 + headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 } + body.count
        let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: headroom + capacity)
        defer { storage.deallocate() }
        let start = storage + headroom
        guard var cursor = writeResponseHeaders(status: status, contentType: contentType, contentLength: body.count,
                                                cacheControl: "no-store", closeConnection: true, headers: headers,
                                                from: start, end: start + capacity) else { return false }
        body.withUnsafeBufferPointer { cursor.update(from: $0.baseAddress!, count: body.count) }
        cursor += body.count
        return write(start, count: cursor - start, mode: .httpFinal) >= 0
    }

    /// After the last byte of a response: lws is ready for the connection's
    /// next request. False when the connection must close instead (return
    /// -1 from the callback).
    public func completeHTTPTransaction() -> Bool {
        lws_http_transaction_completed(wsi) == 0
    }
}

/// Appends HTTP headers into a buffer through lws (which knows the
/// connection's HTTP version and framing).
public struct HTTPHeaderWriter {
    public let connection: LWSConnection
    /// Where the next byte goes.
    public private(set) var position: UnsafeMutablePointer<UInt8>
    public let end: UnsafeMutablePointer<UInt8>

    public init(_ connection: LWSConnection, start: UnsafeMutablePointer<UInt8>, end: UnsafeMutablePointer<UInt8>) {
        self.connection = connection
        position = start
        self.end = end
    }

    /// The status line (must come first).
    public mutating func addStatus(_ status: Int) -> Bool {
        let (wsi, end) = (connection.wsi, end)
        return advance { lws_add_http_header_status(wsi, UInt32(status), $0, end) }
    }

    /// A header lws has a token for.
    public mutating func add(_ header: LWSHeader, _ value: String) -> Bool {
        var value = value
        let (wsi, end) = (connection.wsi, end)
        return value.withUTF8 { bytes in
            advance { lws_add_http_header_by_token(wsi, header.token, bytes.baseAddress, Int32(bytes.count), $0, end) }
        }
    }

    /// Any header, by name (sent in lower case). Every handshake's answer
    /// takes some, so name and value go to lws without heap copies.
    public mutating func add(name: String, value: String) -> Bool {
        var value = value
        let (wsi, end) = (connection.wsi, end)
        // lws wants "name:" NUL-terminated; header names are ASCII tokens.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: name.utf8.count + 2) { key in
            var index = 0
            for byte in name.utf8 {
                key[index] = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
                index += 1
            }
            key[index] = UInt8(ascii: ":")
            key[index + 1] = 0
            return value.withUTF8 { bytes in
                advance { lws_add_http_header_by_name(wsi, key.baseAddress, bytes.baseAddress, Int32(bytes.count), $0, end) }
            }
        }
    }

    /// Ends the header block (response headers only; a client handshake's
    /// extra headers are not finished here).
    public mutating func finish() -> Bool {
        let (wsi, end) = (connection.wsi, end)
        return advance { lws_finalize_http_header(wsi, $0, end) }
    }

    private mutating func advance(_ body: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>) -> Int32) -> Bool {
        var cursor: UnsafeMutablePointer<UInt8>? = position
        let result = body(&cursor)
        if let cursor { position = cursor }
        return result == 0
    }
}
