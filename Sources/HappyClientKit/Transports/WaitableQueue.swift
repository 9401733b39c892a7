import Dispatch
import Synchronization

/// A FIFO that an async reader can wait on, for at most a given time: what
/// the in-memory transport hands to tests (connections, the client's messages).
final class WaitableQueue<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        var waiters: [(id: UInt64, continuation: CheckedContinuation<Element?, Never>)] = []
        var nextID: UInt64 = 0
    }

    private enum Take {
        case item(Element)
        case waiting(UInt64)
    }

    private let state = Mutex(State())

    /// Hands `item` to the oldest waiting reader, or keeps it for the next one.
    func push(_ item: Element) {
        let waiter = state.withLock { state -> CheckedContinuation<Element?, Never>? in
            guard state.waiters.isEmpty else { return state.waiters.removeFirst().continuation }
            state.items.append(item)
            return nil
        }
        waiter?.resume(returning: item)
    }

    /// The oldest item not taken yet, waiting up to `seconds` for one; nil if none came.
    func next(within seconds: Double) async -> Element? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
            let take = state.withLock { state -> Take in
                if !state.items.isEmpty { return .item(state.items.removeFirst()) }
                state.nextID += 1
                state.waiters.append((state.nextID, continuation))
                return .waiting(state.nextID)
            }
            switch take {
            case .item(let item):
                continuation.resume(returning: item)
            case .waiting(let id):
                DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
                    let expired = state.withLock { state -> CheckedContinuation<Element?, Never>? in
                        guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                        return state.waiters.remove(at: index).continuation
                    }
                    expired?.resume(returning: nil)
                }
            }
        }
    }
}
