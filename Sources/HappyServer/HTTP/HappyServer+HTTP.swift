import CWebSockets
import HappyCore

/// The HTTP side: request intake, body collection and response writing.
extension HappyServer {
    /// Largest request body accepted (an intent is small).
    var maxRequestBody: Int { max(config.limits.maxMessageBytes, 4096) }

    func exchange(of wsi: OpaquePointer) -> HTTPExchange? {
        guard let pointer = lws_get_opaque_user_data(wsi) else { return nil }
        let attachment = Unmanaged<Attachment>.fromOpaque(pointer).takeUnretainedValue()
        return attachment.isConnection ? nil : unsafeDowncast(attachment, to: HTTPExchange.self)
    }

    private func attach(_ exchange: HTTPExchange) {
        detachExchange(exchange.wsi)
        lws_set_opaque_user_data(exchange.wsi, Unmanaged.passRetained(exchange as Attachment).toOpaque())
    }

    /// Releases the exchange held by `wsi`, if any.
    func detachExchange(_ wsi: OpaquePointer) {
        guard let pointer = lws_get_opaque_user_data(wsi) else { return }
        let object = Unmanaged<Attachment>.fromOpaque(pointer)
        guard !object.takeUnretainedValue().isConnection else { return }
        let exchange = unsafeDowncast(object.takeUnretainedValue(), to: HTTPExchange.self)
        lws_set_opaque_user_data(wsi, nil)
        exchange.isClosed = true
        exchange.onClose?(exchange)
        exchange.onClose = nil
        object.release()
    }

    func httpRequest(_ wsi: OpaquePointer, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        guard let (method, path) = LWSHeaders.methodAndPath(wsi) else { return -1 }
        let (screen, client) = screenRequest(wsi)
        let exchange = HTTPExchange(wsi: wsi, method: method, path: path, query: LWSHeaders.queryArguments(wsi),
                                    peerAddress: client, startedAt: SystemTime.monotonicSeconds())
        attach(exchange)
        if let refusal = refusal(of: exchange, screen) {
            // The body, if any, is not read, and after a cut request line the framing is unknown.
            var response = refusal
            response.closeConnection = true
            respond(exchange, response)
            return 0
        }
        if method == "POST", let lengthText = LWSHeaders.value(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH),
           let declared = Int(lengthText.trimmingCharacters(in: .whitespaces)), declared > 0 {
            guard declared <= maxRequestBody else {
                var response = HTTPResponse(status: 413, contentType: "application/json",
                                            body: ServerMessageEncoder.error(WireError(
                                                .badMessage, "request body over \(maxRequestBody) bytes")))
                response.closeConnection = true
                respond(exchange, response)
                return 0
            }
            exchange.expectedBodyLength = declared
            return 0  // wait for LWS_CALLBACK_HTTP_BODY_COMPLETION
        }
        route(exchange)
        return 0
    }

    /// The answer to a request refused before routing, or nil to route it.
    private func refusal(of exchange: HTTPExchange, _ screen: RequestScreen) -> HTTPResponse? {
        func error(_ status: Int, _ error: WireError) -> HTTPResponse {
            HTTPResponse(status: status, contentType: "application/json", body: ServerMessageEncoder.error(error))
        }
        switch screen {
        case .cutRequestLine:
            return error(400, WireError(.invalidValue, Self.cutRequestLineMessage))
        case .overAddressCap:
            return error(429, WireError(.rateLimited, "too many connections from \(exchange.peerAddress)"))
        case .pass:
            let names = exchange.query.filter { $0.value.unicodeScalars.contains(where: \.isControl) }.keys.sorted()
            guard let name = names.first else { return nil }
            return error(400, WireError(.invalidValue, "query argument \(name) holds a control character"))
        }
    }

    /// lws restarts its body timeout at every chunk, so a client sending a
    /// byte now and then would hold the connection for ever: the whole body
    /// must arrive within `requestTimeoutSeconds` of the headers.
    func httpBody(_ wsi: OpaquePointer, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        guard let exchange = exchange(of: wsi), let input else { return 0 }
        guard exchange.body.count + length <= maxRequestBody else { return -1 }
        if SystemTime.monotonicSeconds() - exchange.startedAt > Self.requestTimeoutSeconds {
            metrics.countRefusal("slowBody")
            logger.info("dropping slow request body", ["peer": exchange.peerAddress, "path": exchange.route,
                                                      "received": "\(exchange.body.count)"])
            return -1
        }
        exchange.body.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
        return 0
    }

    func httpBodyComplete(_ wsi: OpaquePointer) -> Int32 {
        guard let exchange = exchange(of: wsi), exchange.response == nil else { return 0 }
        route(exchange)
        return 0
    }

    func httpClosed(_ wsi: OpaquePointer) {
        detachExchange(wsi)
    }

    // MARK: responding

    func respond(_ exchange: HTTPExchange, status: Int, json: [UInt8], headers: [(name: String, value: String)] = []) {
        respond(exchange, HTTPResponse(status: status, contentType: "application/json", body: json, headers: headers))
    }

    func respondError(_ exchange: HTTPExchange, status: Int, code: String, _ message: String) {
        var writer = JSONWriter(capacity: 128)
        writer.beginObject()
        writer.key("type"); writer.string("error")
        writer.key("code"); writer.string(code)
        writer.key("message"); writer.string(message)
        writer.endObject()
        respond(exchange, status: status, json: writer.bytes)
    }

    func respond(_ exchange: HTTPExchange, _ response: HTTPResponse) {
        guard !exchange.isClosed, exchange.response == nil else { return }
        exchange.response = response
        metrics.httpRequests["\(response.status / 100)xx", default: 0] += 1
        if response.status >= 400 && response.status != 404 {
            logger.info("http refused", ["method": exchange.method, "path": exchange.route,
                                         "status": "\(response.status)", "peer": exchange.peerAddress])
        }
        lws_callback_on_writable(exchange.wsi)
    }

    func httpWriteable(_ wsi: OpaquePointer) -> Int32 {
        guard let exchange = exchange(of: wsi) else { return 0 }
        if let streamWriter = exchange.streamWriter { return streamWriter(exchange) }
        guard let response = exchange.response else { return 0 }
        let base = scratch + OutboundFrame.headroom
        let end = base + Self.writeBatchBytes
        var cursor: UnsafeMutablePointer<UInt8>? = base
        if !exchange.headersSent {
            // A 304 has no body, so it names neither a type nor a length.
            let bodyless = response.status == 304
            guard writeHeaders(wsi, status: response.status, contentType: bodyless ? nil : response.contentType,
                               contentLength: bodyless ? nil : response.body.count,
                               cacheControl: response.cacheControl, close: response.closeConnection,
                               headers: response.headers, &cursor, end) else { return -1 }
            exchange.headersSent = true
        }
        let room = end - cursor!
        let chunk = min(room, response.body.count - exchange.bodyOffset)
        if chunk > 0 {
            response.body.withUnsafeBufferPointer { body in
                cursor!.update(from: body.baseAddress! + exchange.bodyOffset, count: chunk)
            }
            cursor! += chunk
            exchange.bodyOffset += chunk
        }
        let finished = exchange.bodyOffset >= response.body.count
        let mode = finished ? happy_write_http_final : happy_write_http
        let length = cursor! - base
        if lws_write(wsi, base, length, lws_write_protocol(UInt32(mode))) != length { return -1 }
        guard finished else {
            lws_callback_on_writable(wsi)
            return 0
        }
        detachExchange(wsi)
        if response.closeConnection { return -1 }
        return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
    }

    /// Status line and headers; lws adds the protocol-level ones. Without a
    /// content length the body ends when the connection closes.
    func writeHeaders(_ wsi: OpaquePointer, status: Int, contentType: String?, contentLength: Int?,
                      cacheControl: String, close: Bool, headers: [(name: String, value: String)],
                      _ cursor: inout UnsafeMutablePointer<UInt8>?, _ end: UnsafeMutablePointer<UInt8>) -> Bool {
        func add(_ token: lws_token_indexes, _ value: String) -> Bool {
            var bytes = Array(value.utf8)
            return lws_add_http_header_by_token(wsi, token, &bytes, Int32(bytes.count), &cursor, end) == 0
        }
        guard lws_add_http_header_status(wsi, UInt32(status), &cursor, end) == 0,
              add(WSI_TOKEN_HTTP_CACHE_CONTROL, cacheControl) else { return false }
        if let contentType, !add(WSI_TOKEN_HTTP_CONTENT_TYPE, contentType) { return false }
        if let contentLength, !add(WSI_TOKEN_HTTP_CONTENT_LENGTH, String(contentLength)) { return false }
        if close, !add(WSI_TOKEN_CONNECTION, "close") { return false }
        for header in headers {
            var value = Array(header.value.utf8)
            let name = header.name.lowercased() + ":"
            guard lws_add_http_header_by_name(wsi, name, &value, Int32(value.count), &cursor, end) == 0 else { return false }
        }
        return lws_finalize_http_header(wsi, &cursor, end) == 0
    }
}
