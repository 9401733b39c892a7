/// Reading a request's (or, on a client, a handshake answer's) headers, URI
/// and query arguments, and the peer's address. Headers are only there while
/// lws still holds them: on a server from the first HTTP callback to the
/// answer (to `ESTABLISHED` for a WebSocket upgrade), on a client until `CLIENT_FILTER_PRE_ESTABLISH` (they are freed
/// before `CLIENT_ESTABLISHED`).
public import CWebSockets

/// A header lws parses into a slot of its own (`WSI_TOKEN_*`).
public struct LWSHeader: Hashable, Sendable {
    public let rawValue: UInt32

    @inlinable
    public init(_ token: lws_token_indexes) {
        rawValue = token.rawValue
    }

    @inlinable
    var token: lws_token_indexes { lws_token_indexes(rawValue: rawValue) }

    /// The path of a GET request (lws keeps the query apart), and likewise for the other methods.
    @inlinable public static var getURI: LWSHeader { LWSHeader(WSI_TOKEN_GET_URI) }
    @inlinable public static var postURI: LWSHeader { LWSHeader(WSI_TOKEN_POST_URI) }
    @inlinable public static var headURI: LWSHeader { LWSHeader(WSI_TOKEN_HEAD_URI) }
    @inlinable public static var putURI: LWSHeader { LWSHeader(WSI_TOKEN_PUT_URI) }
    @inlinable public static var deleteURI: LWSHeader { LWSHeader(WSI_TOKEN_DELETE_URI) }
    @inlinable public static var patchURI: LWSHeader { LWSHeader(WSI_TOKEN_PATCH_URI) }
    @inlinable public static var optionsURI: LWSHeader { LWSHeader(WSI_TOKEN_OPTIONS_URI) }
    /// The request line's HTTP version; empty when lws cut the line short.
    @inlinable public static var httpVersion: LWSHeader { LWSHeader(WSI_TOKEN_HTTP) }
    /// The query string, in `&`-separated fragments (see `queryArguments()`).
    @inlinable public static var uriArguments: LWSHeader { LWSHeader(WSI_TOKEN_HTTP_URI_ARGS) }
    @inlinable public static var host: LWSHeader { LWSHeader(WSI_TOKEN_HOST) }
    @inlinable public static var origin: LWSHeader { LWSHeader(WSI_TOKEN_ORIGIN) }
    @inlinable public static var authorization: LWSHeader { LWSHeader(WSI_TOKEN_HTTP_AUTHORIZATION) }
    @inlinable public static var forwardedFor: LWSHeader { LWSHeader(WSI_TOKEN_X_FORWARDED_FOR) }
    @inlinable public static var ifNoneMatch: LWSHeader { LWSHeader(WSI_TOKEN_HTTP_IF_NONE_MATCH) }
    @inlinable public static var accept: LWSHeader { LWSHeader(WSI_TOKEN_HTTP_ACCEPT) }
    @inlinable public static var contentLength: LWSHeader { LWSHeader(WSI_TOKEN_HTTP_CONTENT_LENGTH) }
    @inlinable public static var transferEncoding: LWSHeader { LWSHeader(WSI_TOKEN_HTTP_TRANSFER_ENCODING) }
    @inlinable public static var contentType: LWSHeader { LWSHeader(WSI_TOKEN_HTTP_CONTENT_TYPE) }
    @inlinable public static var cacheControl: LWSHeader { LWSHeader(WSI_TOKEN_HTTP_CACHE_CONTROL) }
    @inlinable public static var connection: LWSHeader { LWSHeader(WSI_TOKEN_CONNECTION) }
    /// `Sec-WebSocket-Protocol`: offered (server) or selected (client handshake answer).
    @inlinable public static var subprotocol: LWSHeader { LWSHeader(WSI_TOKEN_PROTOCOL) }
    /// `Sec-WebSocket-Extensions`: offered (server) or accepted (client handshake answer).
    @inlinable public static var extensions: LWSHeader { LWSHeader(WSI_TOKEN_EXTENSIONS) }

    /// The request-target headers, one per method, in the order they are tried.
    static let methodTargets: [(method: String, header: LWSHeader)] = [
        ("GET", .getURI), ("POST", .postURI), ("HEAD", .headURI), ("PUT", .putURI),
        ("DELETE", .deleteURI), ("PATCH", .patchURI), ("OPTIONS", .optionsURI),
    ]
}

extension LWSConnection {
    /// Total length of a header (all its fragments), 0 when absent.
    @inlinable
    public func headerLength(_ header: LWSHeader) -> Int {
        Int(lws_hdr_total_length(wsi, header.token))
    }

    /// A header's value, or nil when it is absent or empty.
    public func header(_ header: LWSHeader) -> String? {
        let length = headerLength(header)
        guard length > 0 else { return nil }
        return Self.text(capacity: length + 1) { lws_hdr_copy(wsi, $0, $1, header.token) >= 0 }
    }

    /// Each line of a header that came more than once, in order (lws joins
    /// them with commas in `header(_:)`); empty when it is absent.
    public func headerLines(_ header: LWSHeader) -> [String] {
        var lines: [String] = []
        var index: Int32 = 0
        while true {
            let length = Int(lws_hdr_fragment_length(wsi, header.token, index))
            let line = Self.text(capacity: length + 1) { lws_hdr_copy_fragment(wsi, $0, $1, header.token, index) >= 0 }
            guard let line else { break }
            lines.append(line)
            index += 1
        }
        return lines
    }

    /// A header lws has no token for, by name in any case (`X-Happy-Name`).
    public func customHeader(_ name: String) -> String? {
        let key = name.lowercased() + ":"
        let keyLength = Int32(key.utf8.count)
        let length = Int(lws_hdr_custom_length(wsi, key, keyLength))
        guard length > 0 else { return nil }
        return Self.text(capacity: length + 1) { lws_hdr_custom_copy(wsi, $0, $1, key, keyLength) >= 0 }
    }

    /// The query arguments, already URL-decoded by lws; the first of a name
    /// wins, a name without `=` has the empty value. Each argument is read
    /// whole, however long.
    public func queryArguments() -> [String: String] {
        var arguments: [String: String] = [:]
        arguments.reserveCapacity(4)
        var index: Int32 = 0
        while true {
            // Sized per fragment: a fixed buffer would silently end the list at a long argument.
            let length = Int(lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, index))
            let copied = withUnsafeTemporaryAllocation(of: CChar.self, capacity: length + 1) { buffer -> Bool in
                let count = lws_hdr_copy_fragment(wsi, buffer.baseAddress, Int32(buffer.count), WSI_TOKEN_HTTP_URI_ARGS, index)
                guard count >= 0 else { return false }
                // lws counts the bytes it copied; a NUL inside ends the text, as before.
                let raw = UnsafeRawBufferPointer(start: buffer.baseAddress, count: Int(count)).bindMemory(to: UInt8.self)
                let text = UnsafeBufferPointer(rebasing: raw[..<(raw.firstIndex(of: 0) ?? raw.endIndex)])
                QueryArguments.add(fragment: text, to: &arguments)
                return true
            }
            guard copied else { break }
            index += 1
        }
        return arguments
    }

    /// The method and path of an HTTP request (lws keeps the query apart,
    /// see `queryArguments()`), or nil for a method lws does not report.
    public func methodAndPath() -> (method: String, path: String)? {
        for (method, token) in LWSHeader.methodTargets {
            if let path = header(token) { return (method, path) }
        }
        return nil
    }

    /// lws ends the request line at a CR or LF even when it was decoded from
    /// `%0D` or `%0A` in the target: the target is cut there and the rest of
    /// the line, with the HTTP version, is lost (after `%0A` so is the next
    /// header line, usually `Host`). A request line without an HTTP version
    /// is such a cut line (or HTTP/0.9).
    public var requestLineIsCut: Bool {
        headerLength(.httpVersion) == 0
    }

    /// The peer's numeric address (`127.0.0.1`, `::1`), or `?` when unknown.
    public var peerAddress: String {
        Self.text(capacity: 64) { lws_get_peer_simple(wsi, $0, Int($1)) != nil } ?? "?"
    }

    /// The text a C function writes into a zeroed buffer of `capacity` bytes,
    /// up to its first NUL, invalid UTF-8 repaired; nil when `fill` fails.
    /// The buffer is temporary (on the stack when small): a handshake reads
    /// several headers, and the String is the only heap block each takes.
    static func text(capacity: Int, _ fill: (UnsafeMutablePointer<CChar>, Int32) -> Bool) -> String? {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: capacity) { buffer -> String? in
            guard let base = buffer.baseAddress else { return nil }
            buffer.initialize(repeating: 0)
            guard fill(base, Int32(capacity)) else { return nil }
            let bytes = UnsafeRawBufferPointer(buffer).bindMemory(to: UInt8.self)
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[..<(bytes.firstIndex(of: 0) ?? bytes.endIndex)]),
                          as: UTF8.self)
        }
    }
}

/// Query strings as lws hands them over: one decoded `name=value` fragment
/// per `&`-separated part.
public enum QueryArguments {
    /// The arguments of `fragments`: empty fragments are skipped, a name
    /// without `=` gets the empty value, the first of a name wins.
    public static func parse<Fragments: Sequence<String>>(fragments: Fragments) -> [String: String] {
        var arguments: [String: String] = [:]
        for fragment in fragments { add(fragment: fragment, to: &arguments) }
        return arguments
    }

    static func add(fragment: String, to arguments: inout [String: String]) {
        guard !fragment.isEmpty else { return }
        var fragment = fragment
        fragment.withUTF8 { bytes in add(fragment: bytes, to: &arguments) }
    }

    /// The same for a fragment's bytes (a join reads a few of them; splitting
    /// Strings cost more than the rest of the admission).
    static func add(fragment bytes: UnsafeBufferPointer<UInt8>, to arguments: inout [String: String]) {
        guard !bytes.isEmpty else { return }
        let equals = bytes.firstIndex(of: UInt8(ascii: "=")) ?? bytes.endIndex
        let name = String(decoding: UnsafeBufferPointer(rebasing: bytes[..<equals]), as: UTF8.self)
        guard arguments[name] == nil else { return }
        arguments[name] = equals < bytes.endIndex
            ? String(decoding: UnsafeBufferPointer(rebasing: bytes[(equals + 1)...]), as: UTF8.self) : ""
    }
}
