import CWebSockets
import Glibc
import HappyCore

/// A cap on open TCP connections per client address, checked when lws
/// accepts a socket (before any bytes are read), so one host cannot take
/// every slot or hold the server with half-sent requests.
///
/// A trusted proxy's connections carry many clients, so they are not counted
/// at accept: each request's headers name its client (`X-Forwarded-For`), and
/// the connection is counted under that client from then on.
extension HappyServer {
    /// `LWS_CALLBACK_FILTER_NETWORK_CONNECTION`: nonzero refuses the socket.
    func filterNetworkConnection(_ arguments: UnsafeMutableRawPointer?, fd: Int32) -> Int32 {
        guard let arguments else { return 0 }
        let filter = arguments.assumingMemoryBound(to: lws_filter_network_conn_args.self)
        let address = Self.addressText(filter.pointee.cli_addr)
        if trustedProxies.trusts(address) { return 0 }
        if isAtCap(address) { return 1 }
        acceptedAddresses[fd] = address
        return 0
    }

    /// The client of the request whose headers `wsi` holds, and whether the
    /// per-address cap lets it in. For a trusted proxy's connection the
    /// client comes from `X-Forwarded-For`, and the connection moves to that
    /// client's count (a refused request leaves it counted for nobody).
    func admitRequest(_ wsi: OpaquePointer) -> (client: String, admitted: Bool) {
        let counted = addressByConnection[wsi]
        guard !trustedProxies.isEmpty else { return (counted ?? LWSHeaders.peerAddress(wsi), true) }
        let peer = LWSHeaders.peerAddress(wsi)
        guard trustedProxies.trusts(peer) else { return (counted ?? peer, true) }
        let client = trustedProxies.clientAddress(peer: peer, forwardedFor: LWSHeaders.value(wsi, WSI_TOKEN_X_FORWARDED_FOR))
        if counted == client { return (client, true) }
        uncount(wsi)
        if isAtCap(client) { return (client, false) }
        addressByConnection[wsi] = client
        connectionsByAddress[client, default: 0] += 1
        return (client, true)
    }

    /// The client address a connection is counted under, else its peer address.
    func clientAddress(_ wsi: OpaquePointer) -> String {
        addressByConnection[wsi] ?? LWSHeaders.peerAddress(wsi)
    }

    /// Whether `address` already holds `maxConnectionsPerAddress` connections
    /// (counted as a refusal, logged the first few times).
    private func isAtCap(_ address: String) -> Bool {
        let cap = config.limits.maxConnectionsPerAddress
        guard cap > 0, connectionsByAddress[address, default: 0] >= cap else { return false }
        noteRefusal(of: address, cap: cap)
        return true
    }

    private func noteRefusal(of address: String, cap: Int) {
        metrics.countRefusal("perAddress")
        if refusalsLogged[address, default: 0] < 3 {
            refusalsLogged[address, default: 0] += 1
            logger.info("refused", ["reason": "perAddress", "peer": address, "cap": "\(cap)"])
        }
    }

    /// `LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED`: the accepted socket has a wsi now.
    func connectionInstantiated(_ wsi: OpaquePointer) {
        let fd = lws_get_socket_fd(wsi)
        guard let address = acceptedAddresses.removeValue(forKey: fd) else { return }
        addressByConnection[wsi] = address
        connectionsByAddress[address, default: 0] += 1
    }

    /// `LWS_CALLBACK_WSI_DESTROY`: the socket is gone.
    func connectionDestroyed(_ wsi: OpaquePointer) {
        uncount(wsi)
    }

    private func uncount(_ wsi: OpaquePointer) {
        guard let address = addressByConnection.removeValue(forKey: wsi) else { return }
        let remaining = connectionsByAddress[address, default: 1] - 1
        if remaining > 0 {
            connectionsByAddress[address] = remaining
        } else {
            connectionsByAddress.removeValue(forKey: address)
            refusalsLogged.removeValue(forKey: address)
        }
    }

    private static func addressText(_ storage: sockaddr_storage) -> String {
        var copy = storage
        var buffer = [CChar](repeating: 0, count: 64)
        withUnsafeBytes(of: &copy) { raw in
            if storage.ss_family == sa_family_t(AF_INET6) {
                var address = raw.load(as: sockaddr_in6.self).sin6_addr
                _ = inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count))
            } else {
                var address = raw.load(as: sockaddr_in.self).sin_addr
                _ = inet_ntop(AF_INET, &address, &buffer, socklen_t(buffer.count))
            }
        }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
