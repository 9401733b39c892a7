import CWebSockets
import Glibc
import HappyCore

/// A cap on open TCP connections per client address, checked when lws
/// accepts a socket (before any bytes are read), so one host cannot take
/// every slot or hold the server with half-sent requests.
extension HappyServer {
    /// `LWS_CALLBACK_FILTER_NETWORK_CONNECTION`: nonzero refuses the socket.
    func filterNetworkConnection(_ arguments: UnsafeMutableRawPointer?, fd: Int32) -> Int32 {
        guard let arguments else { return 0 }
        let filter = arguments.assumingMemoryBound(to: lws_filter_network_conn_args.self)
        let address = Self.addressText(filter.pointee.cli_addr)
        let cap = config.limits.maxConnectionsPerAddress
        if cap > 0, connectionsByAddress[address, default: 0] >= cap {
            metrics.countRefusal("perAddress")
            if refusalsLogged[address, default: 0] < 3 {
                refusalsLogged[address, default: 0] += 1
                logger.info("refused", ["reason": "perAddress", "peer": address, "cap": "\(cap)"])
            }
            return 1
        }
        acceptedAddresses[fd] = address
        return 0
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
