import CWebSockets
import HappyCore

/// What every request's headers are checked for before it is routed, on the
/// WebSocket upgrade and the HTTP routes alike.
enum RequestScreen {
    case pass
    /// lws cut the request line at a CR or LF decoded from the target.
    case cutRequestLine
    /// A client behind a trusted proxy is at `limits.maxConnectionsPerAddress`.
    case overAddressCap
}

extension HappyServer {
    static let cutRequestLineMessage =
        "the request target holds a line break (%0A or %0D); no name or value may contain control characters"

    /// Screens the request whose headers `wsi` holds; returns the verdict
    /// and the client address (forwarded by a trusted proxy, else the peer).
    func screenRequest(_ wsi: OpaquePointer) -> (screen: RequestScreen, client: String) {
        let (client, admitted) = admitRequest(wsi)
        if LWSHeaders.requestLineIsCut(wsi) {
            metrics.countRefusal("requestLine")
            logger.info("refused", ["reason": "requestLine", "peer": client])
            return (.cutRequestLine, client)
        }
        return (admitted ? .pass : .overAddressCap, client)
    }

    /// `LWS_CALLBACK_HTTP_CONFIRM_UPGRADE`'s answer for a screened-out
    /// upgrade: an HTTP status (the handshake cannot complete: after `%0A`
    /// lws has lost the `Host` header it requires), or nil to go on.
    func refuseScreenedUpgrade(_ wsi: OpaquePointer) -> Int32? {
        let (screen, client) = screenRequest(wsi)
        let status: UInt32
        let message: String
        switch screen {
        case .pass: return nil
        case .cutRequestLine:
            (status, message) = (UInt32(HTTP_STATUS_BAD_REQUEST.rawValue), Self.cutRequestLineMessage)
        case .overAddressCap:
            (status, message) = (429, "too many connections from \(client)")
        }
        return refuseUpgrade(wsi, status: status, message)
    }
}

extension Unicode.Scalar {
    /// C0 and C1 control characters (line breaks, NUL, DEL and the like).
    var isControl: Bool { properties.generalCategory == .control }
}
