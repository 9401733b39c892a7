import CCurl
import Glibc
import Synchronization

/// Blocking HTTP and HTTPS requests through one libcurl easy handle, which
/// keeps its connections for the next request. `perform` waits in libcurl's
/// poll(), so a server that never answers costs a sleeping thread, no CPU.
/// Requests through one client run one at a time: calls from several threads
/// wait their turn; a thread of its own gets a client of its own. Never
/// through a proxy, and only http and https.
public final class HTTPClient: @unchecked Sendable {
    /// `curl_global_init` runs once, before the first handle, whichever thread comes first.
    private static let globalSetup: CURLcode = happy_curl_global_init()

    /// The easy handle and its error buffer, used only under this lock.
    private let lock = Mutex(())
    private let curl: UnsafeMutableRawPointer
    private let errorBuffer: UnsafeMutablePointer<CChar>

    public init() throws(HTTPClientError) {
        let setup = Self.globalSetup
        guard setup == CURLE_OK else {
            throw .setupFailed(reason: "curl_global_init: " + String(cString: curl_easy_strerror(setup)))
        }
        guard let curl = curl_easy_init() else { throw .setupFailed(reason: "curl_easy_init failed") }
        self.curl = curl
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit {
        curl_easy_cleanup(curl)
        errorBuffer.deallocate()
    }

    /// Sends `request` and waits for the whole answer, whatever its status.
    public func perform(_ request: HTTPClientRequest) throws(HTTPClientError) -> HTTPClientResponse {
        let target: RequestURL
        switch RequestURL.parse(request.url) {
        case .failure(let error): throw error
        case .success(let parsed): target = parsed
        }
        return try lock.withLock { _ throws(HTTPClientError) -> HTTPClientResponse in
            try performLocked(request, target: target)
        }
    }

    private func performLocked(_ request: HTTPClientRequest, target: RequestURL) throws(HTTPClientError) -> HTTPClientResponse {
        curl_easy_reset(curl)
        errorBuffer[0] = 0
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headerList) }
        // libcurl would otherwise wait for a `100 Continue` before a large body.
        let expect = request.headers.contains { $0.name.lowercased() == "expect" } ? [] : [HTTPHeader("Expect", "")]
        for header in request.headers + expect {
            guard let appended = curl_slist_append(headerList, "\(header.name): \(header.value)") else {
                throw .setupFailed(reason: "curl_slist_append: out of memory")
            }
            headerList = appended
        }
        let sink = BodySink(limit: request.maxResponseBytes)
        let context = Unmanaged.passUnretained(sink).toOpaque()

        try check(happy_curl_set_error_buffer(curl, errorBuffer), "error buffer")
        try check(happy_curl_set_url(curl, request.url), "URL")
        try check(happy_curl_set_protocols(curl, "http,https"), "protocols")
        try check(happy_curl_set_no_signal(curl), "no signals")
        try check(happy_curl_set_proxy(curl, ""), "no proxy")
        try setMethod(request)
        try check(happy_curl_set_headers(curl, headerList), "headers")
        let milliseconds = request.timeout.isFinite ? max(1, min(Double(Int32.max), (request.timeout * 1000).rounded(.up))) : 0
        try check(happy_curl_set_timeout_ms(curl, Int(milliseconds)), "timeout")
        try check(happy_curl_set_verify_peer(curl, request.trust.verifyPeer ? 1 : 0), "certificate check")
        try check(happy_curl_set_verify_host(curl, request.trust.verifyHost ? 1 : 0), "host name check")
        if let file = request.trust.caFile { try check(happy_curl_set_ca_file(curl, file), "CA file") }
        if let directory = request.trust.caDirectory { try check(happy_curl_set_ca_directory(curl, directory), "CA directory") }
        try check(happy_curl_set_write_function(curl, Self.receiveBody, context), "body sink")

        let code = withExtendedLifetime(sink) { curl_easy_perform(curl) }
        guard code == CURLE_OK else {
            let number = Int32(happy_curl_os_errno(curl))
            throw PerformFailure(code: code, message: lastMessage(code),
                                 systemReason: number != 0 ? String(cString: strerror(number)) : nil,
                                 target: target, request: request, bodyOverflowed: sink.overflowed).error
        }
        return HTTPClientResponse(status: Int(happy_curl_response_code(curl)), headers: responseHeaders(), body: sink.bytes)
    }

    /// GET and HEAD as such; a body goes as POST's does, under the method asked for.
    private func setMethod(_ request: HTTPClientRequest) throws(HTTPClientError) {
        let method = request.method.uppercased()
        if !request.body.isEmpty || ["POST", "PUT", "PATCH"].contains(method) {
            try check(request.body.withUnsafeBytes { happy_curl_set_body(curl, $0.baseAddress, $0.count) }, "body")
            if method != "POST" { try check(happy_curl_set_custom_method(curl, method), "method") }
        } else if method == "GET" {
            try check(happy_curl_set_get(curl), "GET")
        } else if method == "HEAD" {
            try check(happy_curl_set_no_body(curl), "HEAD")
        } else {
            try check(happy_curl_set_custom_method(curl, method), "method")
        }
    }

    /// The headers of the last answer, in order.
    private func responseHeaders() -> [HTTPHeader] {
        var headers: [HTTPHeader] = []
        var previous: UnsafeMutablePointer<curl_header>?
        while let header = curl_easy_nextheader(curl, happy_curl_origin_header, -1, previous) {
            headers.append(HTTPHeader(String(cString: header.pointee.name), String(cString: header.pointee.value)))
            previous = header
        }
        return headers
    }

    private func check(_ code: CURLcode, _ option: String) throws(HTTPClientError) {
        guard code == CURLE_OK else {
            throw .setupFailed(reason: "\(option): " + String(cString: curl_easy_strerror(code)))
        }
    }

    /// libcurl's error buffer, or its text for `code` when the buffer is empty.
    private func lastMessage(_ code: CURLcode) -> String {
        let buffered = String(cString: errorBuffer)
        return buffered.isEmpty ? String(cString: curl_easy_strerror(code)) : buffered
    }

    /// Appends each piece of the body to the `BodySink` in `context`; 0 stops a body past its limit.
    private static let receiveBody: happy_curl_write_function = { data, size, count, context in
        let sink = Unmanaged<BodySink>.fromOpaque(context!).takeUnretainedValue()
        let length = size * count
        guard sink.bytes.count + length <= sink.limit else {
            sink.overflowed = true
            return 0
        }
        if let data { sink.bytes.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length)) }
        return length
    }
}

/// Where one request's answer body gathers.
private final class BodySink {
    let limit: Int
    var bytes: [UInt8] = []
    var overflowed = false

    init(limit: Int) { self.limit = limit }
}
