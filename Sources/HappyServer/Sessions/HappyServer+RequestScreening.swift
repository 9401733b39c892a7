import CWebSockets
import HappyCore

/// What every request's headers are checked for before it is routed, on the
/// WebSocket upgrade and the HTTP routes alike.
enum RequestScreen {
    case pass
    /// A client behind a trusted proxy is at `limits.maxConnectionsPerAddress`.
    case overAddressCap
}

extension HappyServer {
    /// Screens the request whose headers `wsi` holds; returns the verdict
    /// and the client address (forwarded by a trusted proxy, else the peer).
    func screenRequest(_ wsi: OpaquePointer) -> (screen: RequestScreen, client: String) {
        let (client, admitted) = admitRequest(wsi)
        return (admitted ? .pass : .overAddressCap, client)
    }

    /// `LWS_CALLBACK_HTTP_CONFIRM_UPGRADE`'s answer for a screened-out
    /// upgrade: an HTTP status, or nil to go on.
    func refuseScreenedUpgrade(_ wsi: OpaquePointer) -> Int32? {
        let (screen, client) = screenRequest(wsi)
        let status: UInt32
        let message: String
        switch screen {
        case .pass: return nil
        case .overAddressCap:
            (status, message) = (429, "too many connections from \(client)")
        }
        return lws_return_http_status(wsi, status, message) != 0 ? -1 : 1
    }
}
