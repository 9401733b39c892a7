import HappyCore
import HappyLWS
import Synchronization

/// Work other threads hand back to the service thread.
enum InboxMessage: Sendable {
    /// A result to hand to its owner (a store call, a render, cluster news).
    case task(ServiceThreadTask)
    /// A signal the server answers (SIGINT, SIGTERM, SIGHUP, SIGUSR2), or `requestShutdown()` (signal 0).
    case signal(ProcessSignal)
    /// The process taking over in an upgrade said where it is.
    case handover(HandoverMessage)
}

/// A unit of work another thread (store worker, renderer, cluster bus) asks the service thread to run.
struct ServiceThreadTask: @unchecked Sendable {
    let run: () -> Void
}

/// The locked queue through which other threads wake the lws service thread
/// (`LWSContextHandle.cancelService`); the loop drains it after every turn.
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
            if messages.isEmpty { return [] }
            let taken = messages
            messages.removeAll(keepingCapacity: true)
            return taken
        }
    }
}
