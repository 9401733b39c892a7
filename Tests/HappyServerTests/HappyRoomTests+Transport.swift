import Foundation
import HappyClientKit
import Synchronization
import XCTest

/// The libwebsockets transport under the kit, against a real server: its
/// pings are answered, and a connection cut silently (a partition) is
/// noticed by the heartbeat, after which the room comes back and resumes.
extension HappyRoomTests {
    func testALibwebsocketsPingIsAnsweredByTheServer() throws {
        let server = try ServerProcess()
        let (client, _) = try TestClient.join(server, room: "pings", name: "alice")
        defer { client.close() }
        let pongs = Mutex(0)
        for _ in 0..<3 { client.connection.ping { pongs.withLock { $0 += 1 } } }
        XCTAssertEqual(try eventually(seconds: 10) { pongs.withLock { $0 } >= 1 ? true : nil }, true)
        client.connection.ping { pongs.withLock { $0 += 100 } }
        XCTAssertTrue(try eventually(seconds: 10) { pongs.withLock { $0 } >= 100 ? true : nil }, "a later ping, answered too")
    }

    func testTheHeartbeatNoticesASilentPartitionAndTheRoomComesBackAndResumes() async throws {
        let server = try ServerProcess()
        let proxy = try TCPProxy(targetPort: server.port)
        defer { proxy.stop() }
        let configuration = SessionConfiguration(server: try WebSocketURL(validating: "ws://127.0.0.1:\(proxy.port)"),
                                                 room: "partition", name: "alice", reconnects: true,
                                                 backoff: Backoff(initial: 0.2, maximum: 0.5),
                                                 heartbeat: Heartbeat(interval: 0.3, timeout: 1))
        let room = try HappyRoom(configuration: configuration)
        let statuses = Mutex<[ConnectionState]>([])
        let events = room.events
        let following = Task { for await status in room.status { statuses.withLock { $0.append(status) } } }
        defer { following.cancel() }
        try await room.join()
        defer { room.leave() }
        try await room.perform(.dragonForward)

        // Pings answered through the proxy for a few heartbeats: still connected.
        try await Task.sleep(for: .seconds(1.6))
        XCTAssertEqual(statuses.withLock { $0.last }, .connected, "\(statuses.withLock { $0 })")

        proxy.blackhole()
        let noticed = await Self.poll(seconds: 15) {
            statuses.withLock { $0.contains { if case .waiting(_, let reason) = $0 { reason == "no answer to a ping within 1 s" } else { false } } }
        }
        XCTAssertTrue(noticed, "the status left .connected: \(statuses.withLock { $0 })")
        let (bob, _) = try TestClient.join(server, room: "partition", name: "bob")
        bob.intent("face.setHappiness", ["value": 70])
        proxy.heal()

        let seqs = Mutex<[UInt64]>([])
        let reader = Task {
            for await update in events {
                if case .event(let event) = update { seqs.withLock { $0.append(event.seq) } }
            }
        }
        defer { reader.cancel() }
        let resumed = await Self.poll(seconds: 20) { seqs.withLock { $0 } == [1, 2] }
        XCTAssertTrue(resumed, "the event of the partition, once: \(seqs.withLock { $0 })")
        XCTAssertEqual(room.snapshot.connectionState, .connected)
        bob.close()
    }

    /// Polls `condition` every 20 ms for at most `seconds`.
    private static func poll(seconds: Double, _ condition: @Sendable () -> Bool) async -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }
}
