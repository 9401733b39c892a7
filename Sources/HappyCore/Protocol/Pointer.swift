/// Live pointers (PROTOCOL.md section 10): where a client points and what
/// it is doing. Ephemeral: never numbered, recorded, replayed or resumed.

/// The views a pointer can be over.
public enum PointerView: String, Sendable, CaseIterable {
    /// The scene's face, heart and dragon views.
    case face, heart, dragon
}

/// What the pointer's owner is doing.
public enum PointerActivity: String, Sendable, CaseIterable {
    /// `idle` (the default), `drag`, `pinch` or `press`, as the client reports it.
    case idle, drag, pinch, press
}

/// A visible pointer: a view and a spot inside it, 0..1 from its top-left corner.
public struct PointerPosition: Equatable, Sendable {
    /// The view the pointer is over.
    public var view: PointerView
    /// The horizontal position inside the view: 0 at its left edge, 1 at its right.
    public var x: Double
    /// The vertical position inside the view: 0 at its top edge, 1 at its bottom.
    public var y: Double
    /// What the pointer's owner is doing.
    public var activity: PointerActivity

    /// Creates a position; `x` and `y` are not checked here (the wire requires 0...1).
    public init(view: PointerView, x: Double, y: Double, activity: PointerActivity = .idle) {
        self.view = view
        self.x = x
        self.y = y
        self.activity = activity
    }
}

/// A client's pointer as others see it.
public struct PointerEntry: Equatable, Sendable {
    /// The pointer owner's connection id.
    public var id: String
    /// The pointer owner's display name.
    public var name: String
    /// Where the pointer is and what its owner is doing.
    public var position: PointerPosition

    /// Creates an entry from its owner's id and name and the pointer's position.
    public init(id: String, name: String, position: PointerPosition) {
        self.id = id
        self.name = name
        self.position = position
    }
}

extension ClientMessageDecoder {
    /// A `pointer` message: a position, or nil to hide the pointer.
    static func decodePointer(_ json: JSONValue, id: String?) -> Result<PointerPosition?, WireError> {
        func invalid(_ message: String) -> Result<PointerPosition?, WireError> {
            .failure(WireError(.invalidValue, message, id: id))
        }
        guard let viewValue = json["view"] else { return invalid("pointer needs view: face, heart, dragon or null") }
        if viewValue == .null { return .success(nil) }
        guard let viewName = viewValue.stringValue, let view = PointerView(rawValue: viewName) else {
            return invalid("view must be face, heart, dragon or null")
        }
        var coordinates: [Double] = []
        for axis in ["x", "y"] {
            guard let raw = json[axis] else { return invalid("pointer needs \(axis): a number from 0 to 1") }
            guard let value = raw.doubleValue, value.isFinite else {
                return invalid("\(axis) must be a number from 0 to 1, got \(raw.kindName)")
            }
            guard (0...1).contains(value) else { return invalid("\(axis) must be between 0 and 1") }
            coordinates.append(value)
        }
        var activity = PointerActivity.idle
        if let raw = json["activity"], raw != .null {
            guard let name = raw.stringValue, let parsed = PointerActivity(rawValue: name) else {
                return invalid("activity must be idle, drag, pinch or press")
            }
            activity = parsed
        }
        return .success(PointerPosition(view: view, x: coordinates[0], y: coordinates[1], activity: activity))
    }
}

extension ServerMessageEncoder {
    /// One entry of a `pointers` message or of `welcome.pointers`, encoded
    /// once and spliced into every batch that carries it.
    public static func pointerEntry(_ entry: PointerEntry) -> [UInt8] {
        var w = JSONWriter(capacity: 96)
        w.beginObject()
        w.key("id"); w.string(entry.id)
        w.key("name"); w.string(entry.name)
        w.key("view"); w.string(entry.position.view.rawValue)
        w.key("x"); w.number(entry.position.x)
        w.key("y"); w.number(entry.position.y)
        w.key("activity"); w.string(entry.position.activity.rawValue)
        w.endObject()
        return w.bytes
    }

    /// A JSON array of pre-encoded entries.
    public static func pointerArray<Entries: Sequence>(_ entries: Entries) -> [UInt8] where Entries.Element == [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        var first = true
        for entry in entries {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            bytes.append(contentsOf: entry)
        }
        bytes.append(UInt8(ascii: "]"))
        return bytes
    }

    /// `{"type":"pointers","room":…,"pointers":[…],"gone":[…]}` from
    /// pre-encoded entries (see `pointerEntry`).
    public static func pointers<Entries: Sequence>(room: String, entries: Entries, gone: [String],
                                                  headroom: Int = 0) -> [UInt8] where Entries.Element == [UInt8] {
        var w = JSONWriter(headroom: headroom, capacity: 64 + room.utf8.count + 16 * gone.count)
        w.beginObject()
        w.key("type"); w.literal("\"pointers\"")
        w.key("room"); w.string(room)
        w.key("pointers"); w.raw(pointerArray(entries))
        w.key("gone")
        w.beginArray()
        for id in gone { w.string(id) }
        w.endArray()
        w.endObject()
        return w.bytes
    }
}
