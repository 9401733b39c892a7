import HappyCore

/// An accepted socket, as the transport names it: the same value from
/// accept to close, never shared by two sockets open at once.
struct SocketID: Hashable {
    let value: UInt
}

/// A cap on open TCP connections per client address, checked when a socket
/// is accepted (before any bytes are read), so one host cannot take every
/// slot or hold the server with half-sent requests.
///
/// A trusted proxy's connections carry many clients, so they are not counted
/// at accept: each request's headers name its client (`X-Forwarded-For`), and
/// the connection is counted under that client from then on.
final class AddressLimits {

    private var cap: Int
    private var trustedProxies: TrustedProxies
    private let metrics: Metrics
    private let refusals: RefusalLog
    private(set) var connectionsByAddress: [String: Int] = [:]
    private var acceptedAddresses: [Int32: String] = [:]
    private var addressBySocket: [SocketID: String] = [:]

    init(cap: Int, trustedProxies: TrustedProxies, metrics: Metrics, refusals: RefusalLog) {
        self.cap = cap
        self.trustedProxies = trustedProxies
        self.metrics = metrics
        self.refusals = refusals
    }

    /// Applies a configuration read again (SIGHUP): new sockets and requests are counted by it.
    func reconfigure(cap: Int, trustedProxies: TrustedProxies) {
        self.cap = cap
        self.trustedProxies = trustedProxies
    }

    /// A socket from `address` is being accepted as descriptor `fd`; false refuses it.
    func accept(address: String, fd: Int32) -> Bool {
        if trustedProxies.trusts(address) { return true }
        if isAtCap(address) { return false }
        acceptedAddresses[fd] = address
        return true
    }

    /// The accepted socket `fd` has its key now.
    func instantiated(_ socket: SocketID, fd: Int32) {
        guard let address = acceptedAddresses.removeValue(forKey: fd) else { return }
        addressBySocket[socket] = address
        connectionsByAddress[address, default: 0] += 1
    }

    /// The socket is gone.
    func destroyed(_ socket: SocketID) {
        uncount(socket)
    }

    /// The client of a request on `socket`, and whether the cap lets it in.
    /// For a trusted proxy's connection the client comes from `forwardedFor`,
    /// and the connection moves to that client's count (a refused request
    /// leaves it counted for nobody).
    func admitRequest(on socket: SocketID, peer: String, forwardedFor: () -> String?) -> (client: String, admitted: Bool) {
        let counted = addressBySocket[socket]
        guard !trustedProxies.isEmpty, trustedProxies.trusts(peer) else { return (counted ?? peer, true) }
        let client = trustedProxies.clientAddress(peer: peer, forwardedFor: forwardedFor())
        if counted == client { return (client, true) }
        uncount(socket)
        if isAtCap(client) { return (client, false) }
        addressBySocket[socket] = client
        connectionsByAddress[client, default: 0] += 1
        return (client, true)
    }

    /// Whether any proxy's `X-Forwarded-For` is believed.
    var hasTrustedProxies: Bool { !trustedProxies.isEmpty }

    /// The client of a request on `socket`, as `admitRequest` finds it, without counting anything.
    func clientAddress(of socket: SocketID, peer: String, forwardedFor: () -> String?) -> String {
        guard trustedProxies.trusts(peer) else { return addressBySocket[socket] ?? peer }
        return trustedProxies.clientAddress(peer: peer, forwardedFor: forwardedFor())
    }

    /// The client address a socket is counted under, else `peer`.
    func clientAddress(of socket: SocketID, peer: String) -> String {
        addressBySocket[socket] ?? peer
    }

    /// Whether `address` already holds `maxConnectionsPerAddress` connections (counted and logged as a refusal).
    private func isAtCap(_ address: String) -> Bool {
        guard cap > 0, connectionsByAddress[address, default: 0] >= cap else { return false }
        metrics.countRefusal("perAddress")
        refusals.note("perAddress", ["peer": address, "cap": "\(cap)"])
        return true
    }

    private func uncount(_ socket: SocketID) {
        guard let address = addressBySocket.removeValue(forKey: socket) else { return }
        let remaining = connectionsByAddress[address, default: 1] - 1
        if remaining > 0 {
            connectionsByAddress[address] = remaining
        } else {
            connectionsByAddress.removeValue(forKey: address)
        }
    }
}
