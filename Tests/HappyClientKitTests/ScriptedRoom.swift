import Foundation
import HappyClientKit
import Synchronization
import XCTest

/// A room on an in-memory transport whose server ends the test plays, with
/// everything its `status` and `events` yielded since it was made.
final class ScriptedRoom: Sendable {
    let transport = InMemoryTransport()
    let room: HappyRoom
    let statuses = Recorder<ConnectionState>()
    let updates = Recorder<RoomUpdate>()

    init(reconnects: Bool = true, backoff: Backoff = Backoff(initial: 0.05, maximum: 0.1),
         heartbeat: Heartbeat? = nil, deliversOnMainActor: Bool = false) {
        let configuration = SessionConfiguration(server: WebSocketURL("ws://happy.test:8080")!, room: "lobby",
                                                 name: "me", reconnects: reconnects, backoff: backoff,
                                                 heartbeat: heartbeat, deliversOnMainActor: deliversOnMainActor)
        room = HappyRoom(configuration: configuration, transport: transport)
        statuses.follow(room.status)
        updates.follow(room.events)
    }

    /// Joins: the first connection's server end accepts and welcomes at `seq`
    /// of `epoch`; returns that server end.
    func join(seq: UInt64, epoch: String = "e1", file: StaticString = #filePath,
              line: UInt = #line) async throws -> InMemoryPeer {
        let joining = Task { [room] in try await room.join(timeout: 10) }
        let server = try await accept(seq: seq, epoch: epoch, recovered: false, file: file, line: line)
        try await joining.value
        return server
    }

    /// Takes the next connection the session makes (within 10 s), accepts it
    /// and sends a welcome.
    func accept(seq: UInt64, epoch: String = "e1", recovered: Bool, file: StaticString = #filePath,
                line: UInt = #line) async throws -> InMemoryPeer {
        let server = try await nextConnection(file: file, line: line)
        server.accept()
        server.send(SessionFixtures.welcomeText(epoch: epoch, seq: seq, recovered: recovered))
        return server
    }

    /// The next connection the session makes, within `seconds`.
    func nextConnection(within seconds: Double = 10, file: StaticString = #filePath,
                        line: UInt = #line) async throws -> InMemoryPeer {
        let next = await transport.nextConnection(within: seconds)
        return try XCTUnwrap(next, "no new connection within \(seconds) s", file: file, line: line)
    }

    /// The seqs of the events `events` yielded, in order.
    var eventSeqs: [UInt64] {
        updates.all.compactMap { update in
            if case .event(let event) = update { return event.seq }
            return nil
        }
    }

    /// Whether the latest status is `.connected` and a `.waiting` came before it.
    var isConnectedAgain: Bool {
        let all = statuses.all
        guard let waited = all.lastIndex(where: \.isWaiting), all.last == .connected else { return false }
        return waited < all.count - 1
    }

    /// Waits (up to `seconds`) for a status that `matches`; returns it.
    func status(within seconds: Double = 10, where matches: @escaping @Sendable (ConnectionState) -> Bool)
        async -> ConnectionState? {
        await eventually(within: seconds) { self.statuses.all.last(where: matches) }
    }

    func leave() {
        room.leave()
        statuses.stop()
        updates.stop()
    }
}

/// Keeps what an async sequence yields, read from any thread.
final class Recorder<Element: Sendable>: Sendable {
    private let elements = Mutex<[Element]>([])
    private let reader = Mutex<Task<Void, Never>?>(nil)

    func follow(_ sequence: AsyncStream<Element>) {
        let task = Task { [weak self] in
            for await element in sequence { self?.elements.withLock { $0.append(element) } }
        }
        reader.withLock { $0 = task }
    }

    var all: [Element] { elements.withLock { $0 } }

    func stop() {
        reader.withLock { $0?.cancel() }
    }
}

/// Polls `probe` every 10 ms until it gives a value, for at most `seconds`.
func eventually<T>(within seconds: Double = 10, _ probe: @Sendable () -> T?) async -> T? {
    let deadline = Date(timeIntervalSinceNow: seconds)
    while Date() < deadline {
        if let value = probe() { return value }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return probe()
}

extension ConnectionState {
    var isWaiting: Bool {
        if case .waiting = self { return true }
        return false
    }

    var retryDelay: Double? {
        if case .waiting(let delay, _) = self { return delay }
        return nil
    }
}
