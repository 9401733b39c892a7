import Dispatch
import HappyCore

/// Runs store calls off the service thread, one at a time and in order, and
/// posts their results to the wake-up inbox. A synchronous store (memory)
/// is called inline instead.
final class StoreWorker: Sendable {
    let store: any RoomStore
    private let inbox: WakeInbox
    private let queue = DispatchQueue(label: "happy.store")

    init(store: any RoomStore, inbox: WakeInbox) {
        self.store = store
        self.inbox = inbox
    }

    var isSynchronous: Bool { store.isSynchronous }

    func load(_ name: String) {
        let store = self.store, inbox = self.inbox
        queue.async {
            let result: Result<StoredRoom?, StoreError>
            do throws(StoreError) { result = .success(try store.loadRoom(named: name)) } catch { result = .failure(error) }
            inbox.post(.roomLoaded(room: name, result: result))
        }
    }

    /// Reads a room again (a shared store may have moved on).
    func refresh(_ name: String) {
        let store = self.store, inbox = self.inbox
        queue.async {
            let result: Result<StoredRoom?, StoreError>
            do throws(StoreError) { result = .success(try store.loadRoom(named: name)) } catch { result = .failure(error) }
            inbox.post(.roomRefreshed(room: name, result: result))
        }
    }

    func commit(batch: UInt64, _ commits: [RoomCommit]) {
        let store = self.store, inbox = self.inbox
        queue.async {
            let started = SystemTime.monotonicSeconds()
            let result: Result<[CommitConflict], StoreError>
            do throws(StoreError) { result = .success(try store.commit(commits)) } catch { result = .failure(error) }
            inbox.post(.commitFinished(batch: batch, result: result, seconds: SystemTime.monotonicSeconds() - started))
        }
    }

    /// Waits for queued work, then closes the store.
    func close() {
        let store = self.store
        queue.sync { store.close() }
    }
}
