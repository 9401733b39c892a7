/// The frame streams watching one room. Owned by `FrameStreams`.
struct RoomStreams {
    private(set) var list: [FrameStream] = []
    /// When a stream of the room last closed (the room is idle from then on, if nothing else holds it).
    private(set) var lastClosedAt = -Double.infinity

    var isEmpty: Bool { list.isEmpty }

    mutating func add(_ stream: FrameStream) {
        list.append(stream)
    }

    mutating func remove(_ stream: FrameStream, now: Double) {
        list.removeAll { $0 === stream }
        lastClosedAt = now
    }
}
