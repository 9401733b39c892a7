import Foundation
import HappyCore

/// A cluster bus in memory: records what this node watches and announces,
/// and lets the test deliver what other nodes would publish. Its handlers
/// post to the server's inbox, as the Redis bus does from its thread.
final class FakeClusterBus: ClusterBus, @unchecked Sendable {
    let nodeID: String
    private let lock = NSLock()
    private var handlers: (events: @Sendable (RemoteEvents) -> Void, presence: @Sendable (RemotePresence) -> Void,
                           reconnected: @Sendable () -> Void)?
    private var watchedRooms: [String] = []
    private var announcements: [String] = []
    /// What `linkProblem` reports (nil: connected).
    var problem: String?

    init(nodeID: String = "n1") {
        self.nodeID = nodeID
    }

    var watched: [String] { locked { watchedRooms } }
    /// "joined alice lobby", "left bob lobby", in order.
    var announced: [String] { locked { announcements } }
    var linkProblem: String? { locked { problem } }

    func start(events: @escaping @Sendable (RemoteEvents) -> Void, presence: @escaping @Sendable (RemotePresence) -> Void,
               reconnected: @escaping @Sendable () -> Void) {
        locked { handlers = (events, presence, reconnected) }
    }

    func watch(room: String) { locked { watchedRooms.append(room) } }
    func unwatch(room: String) { locked { watchedRooms.removeAll { $0 == room } } }
    func announce(joined participant: Participant, in room: String) {
        locked { announcements.append("joined \(participant.name) \(room)") }
    }
    func announce(left participant: Participant, in room: String) {
        locked { announcements.append("left \(participant.name) \(room)") }
    }
    func stop() { locked { handlers = nil } }

    // MARK: what other nodes do

    func publish(_ events: RemoteEvents) { locked { handlers }?.events(events) }
    func publish(_ presence: RemotePresence) { locked { handlers }?.presence(presence) }
    func reconnect() { locked { handlers }?.reconnected() }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }
}
