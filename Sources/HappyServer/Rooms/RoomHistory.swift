import HappyCore

/// A room's recorded past (PROTOCOL.md section 11): history pages and the
/// room as it was after any held event, read from the store by seq (off
/// the service thread for a store that is not synchronous), checked against
/// the room's current seq.
final class RoomHistory {
    static let defaultLimit = 100
    static let maxLimit = 1000

    private let store: any StoreAccess
    private let labels: DragonStatus
    private let defaults: Scene

    /// `labels`: the dragon label's texts (an event recorded without a label shows the initial one).
    init(store: any StoreAccess, labels: DragonStatus, defaults: Scene) {
        self.store = store
        self.labels = labels
        self.defaults = defaults
    }

    /// The events after `since` (default: from the oldest held), at most `limit`.
    func page(of runtime: RoomRuntime, since: UInt64?, limit: Int,
              completion: @escaping (Result<HistoryPage, HTTPError>) -> Void) {
        guard let room = runtime.room else { return completion(.failure(.unloaded(runtime))) }
        let current = room.committed.seq
        if let since, since > current {
            return completion(.failure(Self.beyond("since", since, current)))
        }
        let name = runtime.name, epoch = room.epoch
        store.read({ store in
            Result { () throws(StoreError) in
                try store.history(ofRoom: name, after: since ?? 0, limit: limit)
            }
        }, completion: { result in
            switch result {
            case .success(let page?):
                completion(.success(page))
            case .success(nil):
                // Never used (only read), or its creation is on the way to the store: no past.
                completion(.success(HistoryPage(epoch: epoch, seq: current, first: current + 1, events: [])))
            case .failure(let error):
                completion(.failure(Self.storeFailed(error)))
            }
        })
    }

    /// The room right after event `seq`, with the dragon's label then.
    func state(of runtime: RoomRuntime, at seq: UInt64, completion: @escaping (Result<PastState, HTTPError>) -> Void) {
        guard let room = runtime.room else { return completion(.failure(.unloaded(runtime))) }
        let current = room.committed.seq
        guard seq <= current else { return completion(.failure(Self.beyond("seq", seq, current))) }
        let name = runtime.name, epoch = room.epoch, defaults = self.defaults
        let initialLabel = labels.initial
        store.read({ store in
            Result { () throws(StoreError) in try store.pastState(ofRoom: name, at: seq) }
        }, completion: { result in
            switch result {
            case .success(.found(var past)):
                if past.dragonStatus.isEmpty { past.dragonStatus = initialLabel }
                completion(.success(past))
            case .success(.gone(let first)):
                completion(.failure(HTTPError(.gone,
                                              "seq \(seq) is no longer held: the history of this room starts at \(first)")))
            case .success(.beyond(let stored)):
                completion(.failure(Self.beyond("seq", seq, stored)))
            case .success(.unknownRoom):
                // Created and not yet recorded: only its beginning exists.
                completion(.success(PastState(epoch: epoch, seq: 0, scene: defaults, dragonStatus: initialLabel)))
            case .failure(let error):
                completion(.failure(Self.storeFailed(error)))
            }
        })
    }

    private static func beyond(_ name: String, _ value: UInt64, _ current: UInt64) -> HTTPError {
        HTTPError(.invalidValue, "\(name) \(value) is beyond the room's seq \(current)")
    }

    private static func storeFailed(_ error: StoreError) -> HTTPError {
        .unavailable("the history could not be read (\(error.message))")
    }
}
