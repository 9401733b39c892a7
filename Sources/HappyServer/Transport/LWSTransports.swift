import CWebSockets
import Glibc

/// A WebSocket connection's transport on an lws wsi.
struct LWSConnectionTransport: ConnectionTransport {
    let wsi: OpaquePointer

    @inline(__always)
    func requestWritable() {
        lws_callback_on_writable(wsi)
    }

    @inline(__always)
    func write(_ bytes: UnsafeMutablePointer<UInt8>, count: Int, as kind: TransportWrite) -> Bool {
        let mode: Int32
        switch kind {
        case .preframed: mode = happy_write_http
        case .text: mode = happy_write_text
        case .binary: mode = happy_write_binary
        case .ping: mode = happy_write_ping
        }
        return lws_write(wsi, bytes, count, lws_write_protocol(UInt32(mode))) >= 0
    }

    func pauseReading() {
        lws_rx_flow_control(wsi, 0)
    }

    func resumeReading() {
        lws_rx_flow_control(wsi, 1)
    }

    func awaitCloseAcknowledgement(seconds: Int32) {
        lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_ACK, seconds)
    }

    func kill() {
        lws_set_timeout(wsi, PENDING_TIMEOUT_KILLED_BY_PARENT, happy_kill_async)
    }

    /// Fixes the kernel send buffer (see `HappyServer.socketSendBufferBytes`).
    func limitSendBuffer(bytes: Int32) -> Bool {
        happy_set_send_buffer(lws_get_socket_fd(wsi), bytes) == 0
    }
}

/// An HTTP exchange's transport on an lws wsi.
struct LWSExchangeTransport: ExchangeTransport {
    let wsi: OpaquePointer

    func requestWritable() {
        lws_callback_on_writable(wsi)
    }

    func write(_ bytes: UnsafeMutablePointer<UInt8>, count: Int, final: Bool) -> Bool {
        let mode = final ? happy_write_http_final : happy_write_http
        return lws_write(wsi, bytes, count, lws_write_protocol(UInt32(mode))) == count
    }

    /// Status line and headers; lws adds the protocol-level ones.
    func writeHeaders(_ head: HTTPResponseHead, into cursor: inout UnsafeMutablePointer<UInt8>?,
                      end: UnsafeMutablePointer<UInt8>) -> Bool {
        func add(_ token: lws_token_indexes, _ value: String) -> Bool {
            var bytes = Array(value.utf8)
            return lws_add_http_header_by_token(wsi, token, &bytes, Int32(bytes.count), &cursor, end) == 0
        }
        guard lws_add_http_header_status(wsi, UInt32(head.status), &cursor, end) == 0,
              add(WSI_TOKEN_HTTP_CACHE_CONTROL, head.cacheControl) else { return false }
        if let contentType = head.contentType, !add(WSI_TOKEN_HTTP_CONTENT_TYPE, contentType) { return false }
        if let contentLength = head.contentLength, !add(WSI_TOKEN_HTTP_CONTENT_LENGTH, String(contentLength)) { return false }
        if head.close, !add(WSI_TOKEN_CONNECTION, "close") { return false }
        for header in head.headers {
            var value = Array(header.value.utf8)
            let name = header.name.lowercased() + ":"
            guard lws_add_http_header_by_name(wsi, name, &value, Int32(value.count), &cursor, end) == 0 else { return false }
        }
        return lws_finalize_http_header(wsi, &cursor, end) == 0
    }

    func keepOpenWithoutTimeout() {
        lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0)
    }

    func limitSendBuffer(bytes: Int32) -> Bool {
        happy_set_send_buffer(lws_get_socket_fd(wsi), bytes) == 0
    }

    var peerHasHungUp: Bool { PeerProbe.hasHungUp(wsi) }

    func kill() {
        lws_set_timeout(wsi, PENDING_TIMEOUT_KILLED_BY_PARENT, happy_kill_async)
    }
}
