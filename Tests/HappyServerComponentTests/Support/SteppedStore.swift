import HappyCore
@testable import HappyServer

/// A store worker the test runs by hand: every load, commit and read waits
/// in order until the test lets it run (`runNext`, `runAll`), on the test's
/// own thread, so the server's asynchronous store paths run in a fixed,
/// repeatable order. Delays are kept (`delay`) but not waited for.
final class SteppedStore: StoreAccess {
    /// One store call waiting to run.
    struct Job {
        enum Kind: Equatable { case load(String), commit([String]), read, delete(String), enqueue(Int) }
        let kind: Kind
        let delay: Double
        let run: () -> Void
    }

    let store: any RoomStore
    private(set) var jobs: [Job] = []

    init(_ store: any RoomStore) {
        self.store = store
    }

    var kind: String { store.kind }
    var keepsHistory: Bool { store.keepsHistory }
    var isSynchronous: Bool { false }

    var pending: [Job.Kind] { jobs.map(\.kind) }

    func load(_ name: String, after delay: Double, completion: @escaping (Result<StoredRoom?, StoreError>) -> Void) {
        let store = self.store
        jobs.append(Job(kind: .load(name), delay: delay) { completion(StoreCall.load(store, name)) })
    }

    func commit(_ commits: [RoomCommit], after delay: Double, completion: @escaping (CommitResult) -> Void) {
        let store = self.store
        jobs.append(Job(kind: .commit(commits.map(\.room)), delay: delay) {
            completion(StoreCall.commit(store, commits))
        })
    }

    func enqueue(_ deliveries: [OutboxDelivery], completion: @escaping (Result<Void, StoreError>) -> Void) {
        let store = self.store
        jobs.append(Job(kind: .enqueue(deliveries.count), delay: 0) { completion(StoreCall.enqueue(store, deliveries)) })
    }

    func delete(_ name: String, completion: @escaping (Result<Void, StoreError>) -> Void) {
        let store = self.store
        jobs.append(Job(kind: .delete(name), delay: 0) { completion(StoreCall.delete(store, name)) })
    }

    func read<Value>(_ read: @escaping @Sendable (any RoomStore) -> Result<Value, StoreError>,
                     completion: @escaping (Result<Value, StoreError>) -> Void) {
        let store = self.store
        jobs.append(Job(kind: .read, delay: 0) { completion(read(store)) })
    }

    /// Runs the oldest waiting call and hands its result back; false when none waits.
    @discardableResult
    func runNext() -> Bool {
        guard !jobs.isEmpty else { return false }
        jobs.removeFirst().run()
        return true
    }

    /// Runs the oldest waiting call of `kind` first; false when none waits.
    @discardableResult
    func run(_ kind: Job.Kind) -> Bool {
        guard let index = jobs.firstIndex(where: { $0.kind == kind }) else { return false }
        jobs.remove(at: index).run()
        return true
    }

    /// Runs calls (and those they lead to) until none waits, at most `limit`.
    func runAll(limit: Int = 1000) {
        var runs = 0
        while runs < limit, runNext() { runs += 1 }
    }

    func close() {
        store.close()
    }

    func release() {
        store.release()
    }
}
