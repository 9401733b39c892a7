/// The frame streams watching one room. Owned by `FrameStreams`.
struct RoomStreams {
    private(set) var list: [FrameStream] = []

    var isEmpty: Bool { list.isEmpty }

    mutating func add(_ stream: FrameStream) {
        list.append(stream)
    }

    mutating func remove(_ stream: FrameStream) {
        list.removeAll { $0 === stream }
    }
}
