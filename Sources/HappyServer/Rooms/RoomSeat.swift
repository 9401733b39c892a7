/// A connection's place in a room: the room it was admitted to and, once
/// welcomed, its index in the room's member list (for O(1) removal). Owned
/// by the room (`RoomRuntime`), which writes it as it seats and unseats.
struct RoomSeat {
    private(set) var room: RoomRuntime?
    private(set) var memberIndex = -1

    var isMember: Bool { memberIndex >= 0 }

    mutating func reserve(in room: RoomRuntime) {
        self.room = room
    }

    mutating func seated(at index: Int) {
        memberIndex = index
    }

    /// Gone from the room (left, or closed before its welcome).
    mutating func vacate() {
        room = nil
        memberIndex = -1
    }
}
