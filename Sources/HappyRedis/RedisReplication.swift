import HappyCore

/// Acks after replication: what a node writes or reads from the primary is
/// acted on only once `WAIT` says enough replicas have it, so a failover to
/// one of them keeps it.
///
/// `WAIT` counts the replicas that acknowledged everything this connection
/// wrote up to its last write, so it is sent on the very connection that
/// did the work, never on one made again meanwhile (a new connection has
/// written nothing: its `WAIT` would confirm nothing). A read is confirmed
/// by a small write after it (the fence): replication is in order, so a
/// replica that has the fence has everything read before it.
enum RedisReplication {
    /// How long one `WAIT` waits for the replicas.
    static let waitMilliseconds = 1000
    static let fenceKey = "happy:replication-fence"

    /// Throws `.unreachable` unless `replicas` replicas confirm what
    /// `connection` (as made at `serial`) wrote, and read, with `fence`.
    static func confirm(on connection: RedisConnection, serial: UInt64, replicas: Int, fence: Bool) throws(StoreError) {
        guard replicas > 0 else { return }
        let server = connection.url.address
        if fence, case .error(let message) = try connection.commandOnSameConnection(["INCR", fenceKey], serial: serial) {
            connection.endpoint.primaryLooksWrong("\(server) refused a write: \(message)")
            throw StoreError(.unreachable, "Redis at \(server) refused the write that confirms a read: \(message)")
        }
        let reply = try connection.commandOnSameConnection(["WAIT", String(replicas), String(waitMilliseconds)], serial: serial)
        guard case .integer(let acked) = reply else {
            connection.endpoint.primaryLooksWrong("\(server) answered WAIT with \(reply)")
            throw StoreError(.unreachable, "Redis at \(server) did not answer WAIT with a count of replicas: \(reply)")
        }
        guard acked >= replicas else {
            connection.endpoint.primaryLooksWrong("\(acked) of \(replicas) replicas confirmed at \(server)")
            throw StoreError(.unreachable, "only \(acked) of the \(replicas) replica\(replicas == 1 ? "" : "s") "
                + "cluster.minReplicaAcks asks for confirmed within \(waitMilliseconds) ms at Redis \(server) "
                + "(a replica down or behind, or a failover under way)")
        }
    }
}
