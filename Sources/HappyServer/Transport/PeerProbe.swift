import CWebSockets
import Glibc

/// Whether the peer of a connection lws is not reading from has gone.
/// lws stops reading an HTTP connection while a response is in progress, so
/// a long response (a frame stream) would not notice its client hanging up
/// until it next writes.
enum PeerProbe {
    /// True when the socket has reached end of file or failed; data waiting
    /// to be read (a pipelined request) or nothing at all means still there.
    static func hasHungUp(_ wsi: OpaquePointer) -> Bool {
        let fd = lws_get_socket_fd(wsi)
        guard fd >= 0 else { return true }
        var byte: UInt8 = 0
        let received = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if received == 0 { return true }
        if received < 0 { return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR }
        return false
    }
}
