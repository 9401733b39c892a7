import Dispatch
import HappyCore
import Synchronization

/// How the server reaches its store: room loads, group commits and reads of
/// the past. Completions always run on the service thread: at once for a
/// synchronous store (memory), through the wake-up inbox for one on the
/// store worker's threads (SQLite, Redis), or when a test says so.
protocol StoreAccess: AnyObject {
    var kind: String { get }
    /// The store keeps each room's events (history, past states).
    var keepsHistory: Bool { get }
    /// Calls finish before they return (the memory store).
    var isSynchronous: Bool { get }
    /// Reads a room, `delay` seconds from now (0: at once).
    func load(_ name: String, after delay: Double, completion: @escaping (Result<StoredRoom?, StoreError>) -> Void)
    /// Records one batch's commits, `delay` seconds from now (a batch in doubt sent again).
    func commit(_ commits: [RoomCommit], after delay: Double, completion: @escaping (CommitResult) -> Void)
    /// Queues webhook deliveries that no commit carries, in order with the commits.
    func enqueue(_ deliveries: [OutboxDelivery], completion: @escaping (Result<Void, StoreError>) -> Void)
    /// Forgets a room, in order with the commits before it.
    func delete(_ name: String, completion: @escaping (Result<Void, StoreError>) -> Void)
    /// Reads the store's past (history pages, past states), beside the writes.
    func read<Value>(_ read: @escaping @Sendable (any RoomStore) -> Result<Value, StoreError>,
                     completion: @escaping (Result<Value, StoreError>) -> Void)
    /// Waits for queued work, then closes the store.
    func close()
    /// Closes for another process taking the store over (see `RoomStore.release`).
    func release()
}

/// What one store call for a batch returned, and how long it took.
struct CommitResult {
    var outcome: Result<[CommitConflict], StoreError>
    var seconds: Double
}

extension StoreAccess {
    func load(_ name: String, completion: @escaping (Result<StoredRoom?, StoreError>) -> Void) {
        load(name, after: 0, completion: completion)
    }
}

/// The store's own calls, each made into a `Result`.
enum StoreCall {
    static func load(_ store: any RoomStore, _ name: String) -> Result<StoredRoom?, StoreError> {
        do throws(StoreError) { return .success(try store.loadRoom(named: name)) } catch { return .failure(error) }
    }

    static func enqueue(_ store: any RoomStore, _ deliveries: [OutboxDelivery]) -> Result<Void, StoreError> {
        do throws(StoreError) { return .success(try store.enqueue(deliveries)) } catch { return .failure(error) }
    }

    static func delete(_ store: any RoomStore, _ name: String) -> Result<Void, StoreError> {
        do throws(StoreError) { return .success(try store.deleteRoom(named: name)) } catch { return .failure(error) }
    }

    static func commit(_ store: any RoomStore, _ commits: [RoomCommit]) -> CommitResult {
        let started = SystemTime.monotonicSeconds()
        let outcome: Result<[CommitConflict], StoreError>
        do throws(StoreError) { outcome = .success(try store.commit(commits)) } catch { outcome = .failure(error) }
        return CommitResult(outcome: outcome, seconds: SystemTime.monotonicSeconds() - started)
    }
}

/// A synchronous store (memory), called inline on the service thread. It
/// never fails in doubt and is never shared, so nothing is ever delayed.
final class InlineStore: StoreAccess {
    let store: any RoomStore

    init(_ store: any RoomStore) {
        self.store = store
    }

    var kind: String { store.kind }
    var keepsHistory: Bool { store.keepsHistory }
    var isSynchronous: Bool { true }

    func load(_ name: String, after delay: Double, completion: @escaping (Result<StoredRoom?, StoreError>) -> Void) {
        completion(StoreCall.load(store, name))
    }

    func commit(_ commits: [RoomCommit], after delay: Double, completion: @escaping (CommitResult) -> Void) {
        completion(StoreCall.commit(store, commits))
    }

    func delete(_ name: String, completion: @escaping (Result<Void, StoreError>) -> Void) {
        completion(StoreCall.delete(store, name))
    }

    func enqueue(_ deliveries: [OutboxDelivery], completion: @escaping (Result<Void, StoreError>) -> Void) {
        completion(StoreCall.enqueue(store, deliveries))
    }

    func read<Value>(_ read: @escaping @Sendable (any RoomStore) -> Result<Value, StoreError>,
                     completion: @escaping (Result<Value, StoreError>) -> Void) {
        completion(read(store))
    }

    func close() {
        store.close()
    }

    func release() {
        store.release()
    }
}

/// Runs store calls off the service thread, loads and commits one at a time
/// and in order, reads of the past on a queue of their own (stores read on
/// a connection of their own); results come back through the wake-up inbox.
final class StoreWorker: StoreAccess, Sendable {
    let store: any RoomStore
    private let inbox: WakeInbox
    private let queue = DispatchQueue(label: "happy.store")
    private let readQueue = DispatchQueue(label: "happy.store.read")
    /// Set once closing: work scheduled for later is dropped.
    private let closed = Atomic<Bool>(false)

    init(store: any RoomStore, inbox: WakeInbox) {
        self.store = store
        self.inbox = inbox
    }

    var kind: String { store.kind }
    var keepsHistory: Bool { store.keepsHistory }
    var isSynchronous: Bool { false }

    func load(_ name: String, after delay: Double, completion: @escaping (Result<StoredRoom?, StoreError>) -> Void) {
        let store = self.store
        run(after: delay, completion) { StoreCall.load(store, name) }
    }

    func commit(_ commits: [RoomCommit], after delay: Double, completion: @escaping (CommitResult) -> Void) {
        let store = self.store
        run(after: delay, completion) { StoreCall.commit(store, commits) }
    }

    func delete(_ name: String, completion: @escaping (Result<Void, StoreError>) -> Void) {
        let store = self.store
        run(after: 0, completion) { StoreCall.delete(store, name) }
    }

    func enqueue(_ deliveries: [OutboxDelivery], completion: @escaping (Result<Void, StoreError>) -> Void) {
        let store = self.store
        run(after: 0, completion) { StoreCall.enqueue(store, deliveries) }
    }

    func read<Value>(_ read: @escaping @Sendable (any RoomStore) -> Result<Value, StoreError>,
                     completion: @escaping (Result<Value, StoreError>) -> Void) {
        let store = self.store, inbox = self.inbox
        let delivery = ServiceThreadCallback(completion)
        readQueue.async {
            let result = read(store)
            inbox.post(.task(ServiceThreadTask { delivery.call(result) }))
        }
    }

    /// Runs `call` on the store queue (after `delay` seconds, leaving the
    /// queue free meanwhile) and hands its result to `completion` on the
    /// service thread.
    private func run<Value>(after delay: Double, _ completion: @escaping (Value) -> Void,
                            _ call: @escaping @Sendable () -> Value) {
        let inbox = self.inbox
        let delivery = ServiceThreadCallback(completion)
        let job: @Sendable () -> Void = { [self] in
            if delay > 0 && closed.load(ordering: .relaxed) { return }
            let result = call()
            inbox.post(.task(ServiceThreadTask { delivery.call(result) }))
        }
        if delay > 0 { queue.asyncAfter(deadline: .now() + delay, execute: job) } else { queue.async(execute: job) }
    }

    func close() {
        let store = self.store
        closed.store(true, ordering: .relaxed)
        readQueue.sync {}
        queue.sync { store.close() }
    }

    func release() {
        let store = self.store
        closed.store(true, ordering: .relaxed)
        readQueue.sync {}
        queue.sync { store.release() }
    }
}

/// A service-thread callback carried through another thread untouched and
/// called again only on the service thread (inside a `ServiceThreadTask`).
struct ServiceThreadCallback<Value>: @unchecked Sendable {
    private let body: (Value) -> Void

    init(_ body: @escaping (Value) -> Void) {
        self.body = body
    }

    func call(_ value: Value) {
        body(value)
    }
}
