import HappyCore

/// An exchange's answer and how far it is written. Only this file writes
/// it: nothing but `HTTPResponder` answers, writes or closes an exchange.
final class HTTPResponseState {
    /// The response given, once given.
    fileprivate(set) var response: HTTPResponse?
    /// Sent with whatever the route answers: CORS on routes pages elsewhere may read.
    fileprivate(set) var crossOriginHeaders: [(name: String, value: String)] = []
    fileprivate(set) var headersSent = false
    fileprivate(set) var bodyOffset = 0
    fileprivate(set) var isClosed = false
    /// A long-lived response (a frame stream) writes through this instead; false closes.
    fileprivate var streamWriter: (() -> Bool)?
    fileprivate var onClose: (() -> Void)?
}

extension HTTPExchange {
    /// Marks the exchange closed (its answer is out, or its connection
    /// closed) and tells a stream on it, once.
    func finish() {
        let state = responseState
        guard !state.isClosed else { return }
        state.isClosed = true
        state.onClose?()
        state.onClose = nil
        state.streamWriter = nil
    }
}

/// Answers HTTP exchanges: records the response, counts and logs it, and
/// writes it in the exchange's writable callbacks, one chunk at a time.
final class HTTPResponder {
    /// Largest chunk written per writable callback, headers included.
    static let writeChunkBytes = 32 * 1024

    private let metrics: Metrics
    private let refusals: RefusalLog
    private let scratch = WriteScratch(capacity: writeChunkBytes)
    /// On every answer (`SecurityHeaders.common`).
    let commonHeaders: [(name: String, value: String)]

    init(security: SecurityHeaders, metrics: Metrics, refusals: RefusalLog) {
        commonHeaders = security.common
        self.metrics = metrics
        self.refusals = refusals
    }

    func respond(_ exchange: HTTPExchange, status: Int, json: [UInt8], headers: [(name: String, value: String)] = []) {
        respond(exchange, HTTPResponse(status: status, contentType: "application/json", body: json, headers: headers))
    }

    func respond(_ exchange: HTTPExchange, _ error: HTTPError, closeConnection: Bool = false,
                 headers: [(name: String, value: String)] = []) {
        var response = HTTPResponse(status: error.status, contentType: "application/json", body: error.body,
                                    headers: headers)
        response.closeConnection = closeConnection
        respond(exchange, response)
    }

    func respond(_ exchange: HTTPExchange, _ response: HTTPResponse) {
        guard !exchange.isClosed, exchange.response == nil else { return }
        var response = response
        if response.status == 429 && !response.headers.contains(where: { $0.name == "Retry-After" }) {
            response.headers.append(("Retry-After", "1"))
        }
        exchange.responseState.response = response
        countResponse(status: response.status)
        if response.status >= 400 && response.status != 404 {
            refusals.note("http \(response.status)", line: "http refused",
                          [("method", exchange.method), ("path", exchange.route), ("status", "\(response.status)"),
                           ("peer", exchange.peerAddress)])
        }
        exchange.transport.requestWritable()
    }

    /// Whatever the route answers on `exchange` carries `headers` (CORS, for pages elsewhere).
    func sendCrossOriginHeaders(_ headers: [(name: String, value: String)], on exchange: HTTPExchange) {
        exchange.responseState.crossOriginHeaders = headers
    }

    /// Hands the exchange's writable callbacks to `writer` (a frame stream;
    /// false closes the connection) until it closes, when `onClose` runs once.
    func stream(_ exchange: HTTPExchange, writer: @escaping () -> Bool, onClose: @escaping () -> Void) {
        exchange.responseState.streamWriter = writer
        exchange.responseState.onClose = onClose
    }

    /// Counts a response by status class (streams count when they start).
    func countResponse(status: Int) {
        metrics.httpRequests["\(status / 100)xx", default: 0] += 1
    }

    /// The exchange's writable callback; `done` is true once the whole
    /// response is out; false from `ok` means the connection must close.
    func writeable(_ exchange: HTTPExchange) -> (ok: Bool, done: Bool) {
        let state = exchange.responseState
        if let streamWriter = state.streamWriter { return (streamWriter(), false) }
        guard let response = state.response else { return (true, false) }
        let base = scratch.start
        let end = scratch.end
        var cursor: UnsafeMutablePointer<UInt8>? = base
        if !state.headersSent {
            // A 304 has no body, so it names neither a type nor a length.
            let bodyless = response.status == 304
            let head = HTTPResponseHead(status: response.status, contentType: bodyless ? nil : response.contentType,
                                        contentLength: bodyless ? nil : response.body.count,
                                        cacheControl: response.cacheControl, close: response.closeConnection,
                                        headers: commonHeaders + response.headers + state.crossOriginHeaders)
            guard exchange.transport.writeHeaders(head, into: &cursor, end: end) else { return (false, false) }
            state.headersSent = true
        }
        let room = end - cursor!
        let chunk = min(room, response.body.count - state.bodyOffset)
        if chunk > 0 {
            response.body.withUnsafeBufferPointer { body in
                cursor!.update(from: body.baseAddress! + state.bodyOffset, count: chunk)
            }
            cursor! += chunk
            state.bodyOffset += chunk
        }
        let finished = state.bodyOffset >= response.body.count
        guard exchange.transport.write(base, count: cursor! - base, final: finished) else { return (false, false) }
        guard finished else {
            exchange.transport.requestWritable()
            return (true, false)
        }
        return (true, true)
    }
}
