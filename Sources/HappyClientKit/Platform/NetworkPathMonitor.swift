#if canImport(Network)
import Dispatch
import Network

/// `NWPathMonitor` for a session (Apple platforms): a change of network
/// reconnects at once instead of waiting for the old socket to time out.
final class NetworkPathMonitor: NetworkPathWatching, @unchecked Sendable {
    private let monitor = NWPathMonitor()
    private let queue = DispatchQueue(label: "happy.network-path")
    /// Touched on `queue` only.
    private var filter = PathChangeFilter()

    init(changed: @escaping @Sendable () -> Void) {
        monitor.pathUpdateHandler = { [weak self] path in
            guard let self else { return }
            let summary = PathSummary(isUsable: path.status == .satisfied,
                                      interfaces: path.availableInterfaces.map(\.name))
            if self.filter.update(summary) { changed() }
        }
        monitor.start(queue: queue)
    }

    func cancel() {
        monitor.cancel()
    }
}
#endif
