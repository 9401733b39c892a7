import Foundation
import HappyCore

/// A room store that records every commit and can be told to fail. When
/// asynchronous, the server calls it from its store worker thread and the
/// results come back through the inbox (like SQLite or Redis); otherwise
/// inline (like the memory store).
final class ScriptedStore: RoomStore, @unchecked Sendable {
    let isSynchronous: Bool
    let kind = "scripted"
    let keepsHistory: Bool

    private let lock = NSLock()
    private var rooms: [String: StoredRoom] = [:]
    private var recordedCommits: [[RoomCommit]] = []
    private var loads: [String] = []
    private var failure: StoreError?
    private var nodesAhead: [String: StoredRoom] = [:]
    private var readFailure: StoreError?

    init(synchronous: Bool, keepsHistory: Bool = false) {
        isSynchronous = synchronous
        self.keepsHistory = keepsHistory
    }

    /// Every `commit` call's commits, in order (failed calls included).
    var commitCalls: [[RoomCommit]] { locked { recordedCommits } }
    var loadedRooms: [String] { locked { loads } }

    /// Makes the next writes fail with `error` (nil: succeed again).
    func failWrites(with error: StoreError?) {
        locked { failure = error }
    }

    /// Another node records `room` first: the next commit of that room is
    /// refused as a conflict, and the store holds `room` from then on.
    func anotherNodeRecords(_ room: StoredRoom) {
        locked { nodesAhead[room.name] = room }
    }

    /// The store loses `room` (a Redis without persistence restarted).
    func forget(_ room: String) {
        locked { _ = rooms.removeValue(forKey: room) }
    }

    /// Makes room reads fail with `error` (nil: succeed again).
    func failReads(with error: StoreError?) {
        locked { readFailure = error }
    }

    /// A room the store holds before anyone asks.
    func seed(_ room: StoredRoom) {
        locked { rooms[room.name] = room }
    }

    func stored(_ name: String) -> StoredRoom? {
        locked { rooms[name] }
    }

    func loadRoom(named name: String) throws(StoreError) -> StoredRoom? {
        let (room, failure): (StoredRoom?, StoreError?) = locked {
            loads.append(name)
            return (rooms[name], readFailure)
        }
        if let failure { throw failure }
        return room
    }

    /// History reads: what the commits recorded, all of it held (first is 1).
    func history(ofRoom name: String, after since: UInt64, limit: Int) throws(StoreError) -> HistoryPage? {
        locked {
            guard let room = rooms[name] else { return nil }
            let events = room.history.filter { $0.seq > since }.prefix(limit)
            return HistoryPage(epoch: room.epoch, seq: room.seq, first: 1, events: Array(events))
        }
    }

    func pastState(ofRoom name: String, at seq: UInt64) throws(StoreError) -> PastStateLookup {
        locked {
            guard let room = rooms[name] else { return .unknownRoom }
            if seq > room.seq { return .beyond(current: room.seq) }
            guard seq > 0, let event = room.history.first(where: { $0.seq == seq }),
                  let scene = MemoryRoomStore.scene(in: event.json) else {
                return .found(PastState(epoch: room.epoch, seq: seq, scene: .standard, dragonStatus: ""))
            }
            return .found(PastState(epoch: room.epoch, seq: seq, scene: scene, dragonStatus: event.dragonStatus))
        }
    }

    func commit(_ commits: [RoomCommit]) throws(StoreError) -> [CommitConflict] {
        var conflicts: [CommitConflict] = []
        let refusal: StoreError? = locked {
            recordedCommits.append(commits)
            if let failure { return failure }
            for commit in commits {
                if let ahead = nodesAhead.removeValue(forKey: commit.room) {
                    rooms[commit.room] = ahead
                    conflicts.append(CommitConflict(room: commit.room, current: ahead))
                    continue
                }
                if conflicts.contains(where: { $0.room == commit.room }) { continue }
                outbox.append(commit.deliveries)
                var history = rooms[commit.room].map { $0.epoch == commit.epoch ? $0.history : [] } ?? []
                history += commit.events
                rooms[commit.room] = StoredRoom(name: commit.room, epoch: commit.epoch, seq: commit.seq,
                                                scene: commit.scene, history: history)
            }
            return nil
        }
        if let refusal { throw refusal }
        return conflicts
    }

    let outbox = MemoryWebhookOutbox()

    func enqueue(_ deliveries: [OutboxDelivery]) throws(StoreError) {
        outbox.append(deliveries)
    }

    func webhookOutbox() throws(StoreError) -> any WebhookOutbox { outbox }

    func deleteRoom(named name: String) throws(StoreError) {
        locked { _ = rooms.removeValue(forKey: name) }
    }

    /// A backup is a file holding the names of the rooms stored, enough to
    /// tell one backup from another.
    func backup(to path: String) throws(StoreError) {
        let names = locked { rooms.keys.sorted().joined(separator: "\n") }
        guard FileManager.default.createFile(atPath: path, contents: Data(names.utf8)) else {
            throw StoreError(.io, "cannot write \(path)")
        }
    }

    func close() {}

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }
}
