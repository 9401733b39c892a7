/// Something that follows the network path until cancelled.
protocol NetworkPathWatching: AnyObject, Sendable {
    func cancel()
}

/// The network path as the kit compares it: usable or not, and through
/// which interfaces (the preferred one first).
struct PathSummary: Equatable, Sendable {
    var isUsable: Bool
    var interfaces: [String]
}

/// Picks the path updates that call for a reconnect: a usable path that
/// differs from the one before (another network, or back online). Not the
/// first update (the path as it was at start), nor a path going away: the
/// heartbeat and the transport notice a dead connection, and reconnecting
/// without a network cannot succeed.
struct PathChangeFilter: Equatable, Sendable {
    private var last: PathSummary?

    /// Takes in an update; true when the session should reconnect now.
    mutating func update(_ path: PathSummary) -> Bool {
        defer { last = path }
        guard let last else { return false }
        return path.isUsable && path != last
    }
}

/// Where the platform can tell, follows the network path for a session.
enum NetworkPath {
    /// Calls `changed` whenever the path changes as `PathChangeFilter` says;
    /// nil where the platform has no Network framework (Linux).
    static func watch(changed: @escaping @Sendable () -> Void) -> (any NetworkPathWatching)? {
        #if canImport(Network)
        return NetworkPathMonitor(changed: changed)
        #else
        return nil
        #endif
    }
}
