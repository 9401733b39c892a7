import HappyCore

/// The other clients' visible pointers (PROTOCOL.md section 10), by id: set
/// from each welcome, updated by every `pointers` batch, and cleared of a
/// client when it leaves or of everyone when the connection drops (the next
/// welcome lists them again). A value type whose methods say what changed.
public struct PointerBoard: Equatable, Sendable {
    /// The visible pointers, by client id.
    public private(set) var pointers: [String: PointerEntry] = [:]

    /// An empty board.
    public init() {}

    /// Takes in a welcome: its list replaces everything known.
    public mutating func welcome(_ welcome: WelcomeMessage) -> PointerUpdate {
        let old = pointers
        pointers = [:]
        let shown = welcome.pointers.filter { $0.id != welcome.you.id }
        for entry in shown { pointers[entry.id] = entry }
        let removed = old.values.filter { pointers[$0.id] == nil }.sorted { $0.id < $1.id }
        return PointerUpdate(cause: .welcome, moved: shown, gone: removed.map(\.id), removed: removed, pointers: pointers)
    }

    /// Takes in a batch; `you` is this client's id (the server never sends
    /// a client its own pointer; should one come, it is ignored).
    public mutating func batch(_ message: PointersMessage, you: String?) -> PointerUpdate {
        var removed: [PointerEntry] = []
        for id in message.gone {
            if let entry = pointers.removeValue(forKey: id) { removed.append(entry) }
        }
        let moved = message.pointers.filter { $0.id != you }
        for entry in moved { pointers[entry.id] = entry }
        return PointerUpdate(cause: .batch, moved: moved, gone: message.gone, removed: removed, pointers: pointers)
    }

    /// A client left the room: its pointer goes with it. Nil when it had none.
    public mutating func left(_ participant: Participant) -> PointerUpdate? {
        guard let entry = pointers.removeValue(forKey: participant.id) else { return nil }
        return PointerUpdate(cause: .left, moved: [], gone: [entry.id], removed: [entry], pointers: pointers)
    }

    /// The connection dropped: nothing known is current any more. Nil when
    /// nothing was shown.
    public mutating func disconnected() -> PointerUpdate? {
        guard !pointers.isEmpty else { return nil }
        let removed = pointers.values.sorted { $0.id < $1.id }
        pointers = [:]
        return PointerUpdate(cause: .disconnected, moved: [], gone: removed.map(\.id), removed: removed, pointers: [:])
    }
}

/// A change to the others' pointers, as a session's delegate hears it.
public struct PointerUpdate: Equatable, Sendable {
    /// What brought a change about.
    public enum Cause: Equatable, Sendable {
        /// A welcome listed the pointers shown when this client joined.
        case welcome
        /// A `pointers` message from the server.
        case batch
        /// A client with a visible pointer left the room.
        case left
        /// The connection dropped; the pointers are unknown until the next welcome.
        case disconnected
    }

    /// What brought this change about.
    public var cause: Cause
    /// Pointers that appeared or moved, with their new position.
    public var moved: [PointerEntry]
    /// The ids of pointers hidden or gone, as the server listed them (some
    /// may never have been shown to this client).
    public var gone: [String]
    /// The pointers this client showed that are now gone, as they last were.
    public var removed: [PointerEntry]
    /// Every visible pointer after the change, by id.
    public var pointers: [String: PointerEntry]

    /// Creates an update; `pointers` is every visible pointer after it.
    public init(cause: Cause, moved: [PointerEntry], gone: [String], removed: [PointerEntry],
                pointers: [String: PointerEntry]) {
        self.cause = cause
        self.moved = moved
        self.gone = gone
        self.removed = removed
        self.pointers = pointers
    }

    /// Nothing appeared, moved or went.
    public var isEmpty: Bool { moved.isEmpty && gone.isEmpty }
}
