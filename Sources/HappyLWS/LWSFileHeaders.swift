/// Headers added to the answers of the file mount, chosen per request.
internal import CWebSockets

/// Headers for static files' answers (a 200; lws writes a 304 before it
/// asks), from the request's path and `Origin` header. lws asks only the
/// protocol a file mount is bound to, so the mount is bound to
/// `protocolName`; a missing file, and a POST below the mount, then reach
/// that protocol's HTTP callback (a missing file reaches the first
/// protocol's otherwise, and a POST is answered with the file).
public struct LWSFileHeaders: Sendable {
    public var protocolName: String
    public var headers: @Sendable (_ path: String, _ origin: String?) -> [(name: String, value: String)]

    public init(protocolName: String,
                headers: @escaping @Sendable (_ path: String, _ origin: String?) -> [(name: String, value: String)]) {
        self.protocolName = protocolName
        self.headers = headers
    }
}

extension LWSConnection {
    /// `LWS_CALLBACK_ADD_HEADERS`: appends `fileHeaders`' headers for this
    /// request at the cursor `input` (a `lws_process_html_args`) holds.
    /// False when they do not fit.
    func addFileHeaders(_ fileHeaders: LWSFileHeaders, into input: UnsafeMutableRawPointer?) -> Bool {
        guard let input else { return true }
        let headers = fileHeaders.headers(header(.getURI) ?? "", header(.origin))
        guard !headers.isEmpty else { return true }
        let args = input.assumingMemoryBound(to: lws_process_html_args.self)
        guard let raw = args.pointee.p else { return true }
        let start = UnsafeMutableRawPointer(raw).assumingMemoryBound(to: UInt8.self)
        var writer = HTTPHeaderWriter(self, start: start, end: start + Int(args.pointee.max_len))
        defer {
            args.pointee.max_len -= Int32(writer.position - start)
            args.pointee.p = UnsafeMutableRawPointer(writer.position).assumingMemoryBound(to: CChar.self)
        }
        for header in headers {
            guard writer.add(name: header.name, value: header.value) else { return false }
        }
        return true
    }
}
