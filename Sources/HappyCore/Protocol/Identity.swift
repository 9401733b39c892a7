/// A client as others see it: in presence lists and as an event's sender.
public struct Participant: Equatable, Hashable, Sendable {
    /// The connection's id (`c7`); `http` for intents sent with `POST /api/intent`.
    public var id: String
    /// The display name: 1–32 printable characters (`guest-<id>` by default).
    public var name: String

    /// Creates a participant from its id and display name.
    public init(id: String, name: String) {
        self.id = id
        self.name = name
    }
}

/// What a client may do (PROTOCOL.md section 7).
public enum Role: String, Sendable, CaseIterable, Comparable {
    /// `viewer` receives everything and sends no intents; `player` sends intents;
    /// `admin` may also `room.reset` when auth is on.
    case viewer, player, admin

    private var rank: Int {
        switch self {
        case .viewer: return 0
        case .player: return 1
        case .admin: return 2
        }
    }

    /// Orders roles by what they allow: `viewer` < `player` < `admin`.
    public static func < (lhs: Role, rhs: Role) -> Bool { lhs.rank < rhs.rank }

    /// Whether the role may send intents (every role but `viewer`).
    public var maySendIntents: Bool { self != .viewer }
}

/// Checks of the names the protocol constrains.
public enum Names {
    /// The longest room name, in characters (64).
    public static let maxRoomLength = 64
    /// The longest display name, in Unicode characters (32).
    public static let maxDisplayNameLength = 32

    /// Room names: 1–64 characters of `[A-Za-z0-9_-]`.
    public static func isValidRoom(_ name: String) -> Bool {
        let utf8 = name.utf8
        guard !utf8.isEmpty, utf8.count <= maxRoomLength else { return false }
        return utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
    }

    /// Display names: 1–32 printable characters (Unicode characters, not bytes).
    public static func isValidDisplayName(_ name: String) -> Bool {
        guard !name.isEmpty, name.count <= maxDisplayNameLength else { return false }
        return name.unicodeScalars.allSatisfy(isPrintable)
    }

    private static func isPrintable(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .surrogate, .unassigned:
            return false
        default:
            return true
        }
    }
}
