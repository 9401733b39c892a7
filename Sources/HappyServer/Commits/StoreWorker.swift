import Dispatch
import HappyCore
import Synchronization

/// Runs store calls off the service thread, one at a time and in order, and
/// posts their results to the wake-up inbox. A synchronous store (memory)
/// is called inline instead.
final class StoreWorker: Sendable {
    let store: any RoomStore
    private let inbox: WakeInbox
    private let queue = DispatchQueue(label: "happy.store")
    /// History reads, beside the writes (stores read on a connection of their own).
    private let readQueue = DispatchQueue(label: "happy.store.read")
    /// Set once closing: work scheduled for later is dropped.
    private let closed = Atomic<Bool>(false)

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

    /// Records a batch; `after`: sends it again after that many seconds (a
    /// batch in doubt), leaving the queue free for other work meanwhile.
    func commit(batch: UInt64, _ commits: [RoomCommit], after delay: Double = 0) {
        let store = self.store, inbox = self.inbox
        let run: @Sendable () -> Void = { [self] in
            if delay > 0 && closed.load(ordering: .relaxed) { return }
            let started = SystemTime.monotonicSeconds()
            let result: Result<[CommitConflict], StoreError>
            do throws(StoreError) { result = .success(try store.commit(commits)) } catch { result = .failure(error) }
            inbox.post(.commitFinished(batch: batch, result: result, seconds: SystemTime.monotonicSeconds() - started))
        }
        if delay > 0 { queue.asyncAfter(deadline: .now() + delay, execute: run) } else { queue.async(execute: run) }
    }

    /// Reads a room again after `delay` seconds (a refresh that failed while the store was away).
    func refresh(_ name: String, after delay: Double) {
        queue.asyncAfter(deadline: .now() + delay) { [self] in
            if !closed.load(ordering: .relaxed) { refresh(name) }
        }
    }

    /// Runs `read` on the read queue; its result comes back through the inbox to `completion`.
    func read<Value>(_ read: @escaping @Sendable (any RoomStore) -> Result<Value, StoreError>,
                     completion: @escaping (Result<Value, StoreError>) -> Void) {
        let store = self.store, inbox = self.inbox
        let delivery = UncheckedCompletion(completion)
        readQueue.async {
            let result = read(store)
            inbox.post(.task(ServiceThreadTask { delivery.completion(result) }))
        }
    }

    /// Waits for queued work, then closes the store.
    func close() {
        let store = self.store
        closed.store(true, ordering: .relaxed)
        readQueue.sync {}
        queue.sync { store.close() }
    }
}

/// A service-thread callback carried through another thread untouched.
private struct UncheckedCompletion<Value>: @unchecked Sendable {
    let completion: (Result<Value, StoreError>) -> Void
    init(_ completion: @escaping (Result<Value, StoreError>) -> Void) { self.completion = completion }
}
