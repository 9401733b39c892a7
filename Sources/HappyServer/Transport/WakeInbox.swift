import HappyCore
import HappyLWS
import Synchronization

/// Work other threads hand back to the service thread.
enum InboxMessage: Sendable {
    case roomLoaded(room: String, result: Result<StoredRoom?, StoreError>)
    case roomRefreshed(room: String, result: Result<StoredRoom?, StoreError>)
    case commitFinished(batch: UInt64, result: Result<[CommitConflict], StoreError>, seconds: Double)
    case shutdownRequested(signal: Int32)
    case task(ServiceThreadTask)
}

/// A unit of work another module (renderer, cluster link) asks the service thread to run.
struct ServiceThreadTask: @unchecked Sendable {
    let run: () -> Void
}

/// The locked queue through which other threads wake the lws service thread
/// (`LWSContextHandle.cancelService`), drained in `LWS_CALLBACK_EVENT_WAIT_CANCELLED`.
final class WakeInbox: Sendable {
    private let queue = Mutex<[InboxMessage]>([])
    private let context = Mutex<LWSContextHandle?>(nil)

    func attach(_ handle: LWSContextHandle?) {
        context.withLock { $0 = handle }
    }

    func post(_ message: InboxMessage) {
        queue.withLock { $0.append(message) }
        if let handle = context.withLock({ $0 }) {
            handle.cancelService()
        }
    }

    func drain() -> [InboxMessage] {
        queue.withLock { messages in
            let taken = messages
            messages.removeAll(keepingCapacity: true)
            return taken
        }
    }
}
