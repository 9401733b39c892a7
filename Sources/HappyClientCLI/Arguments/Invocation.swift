import HappyClientKit
import HappyCore
import HappyRender

/// A parsed command line: the common options and what to do.
public struct Invocation: Equatable, Sendable {
    public var common: CommonOptions
    public var command: Command

    public init(common: CommonOptions = CommonOptions(), command: Command) {
        self.common = common
        self.command = command
    }
}

/// What `happyclient` was asked to do.
public enum Command: Equatable, Sendable {
    /// Show the tool's help, or a command's.
    case help(CommandName?)
    /// Show the version (`--version`).
    case version
    /// The room now (through a welcome), or with `seq` as it was right after that event.
    case state(json: Bool, seq: UInt64? = nil)
    /// Send these intents one after the other (`happiness 80`, `dragon forward --times 3`…).
    case intents(CommandName, [Action])
    /// Stream the room; with `pointers`, the others' live pointers too.
    case watch(json: Bool, pointers: Bool = false)
    case play(PlayOptions)
    case ping(count: Int)
    /// Print the room's recorded events.
    case history(HistoryOptions)
    /// Play the room's past in the full-screen view, then go live.
    case replay(ReplayOptions)
    /// Save a server-rendered frame of the room, now or at a past seq.
    case frame(FrameOptions)
    /// The rooms in the server's memory, a page at a time (the operator API).
    case rooms(RoomsOptions)
    /// One room and its connections, with their lag, resyncs and rate-limit hits.
    case room(String, json: Bool)
    /// Remove connections from a room (close 4003).
    case kick(KickOptions)
    /// Close a room's connections (4004) and erase its state and history.
    case deleteRoom(String)

    /// Whether the command takes part in the room: it sends intents, so it
    /// goes by a name (the login name unless told).
    var actsInTheRoom: Bool {
        switch self {
        case .intents, .play, .replay: return true
        default: return false
        }
    }

    /// Whether the command only watches a room it joins: it joins as an
    /// observer (`observe=1`), out of everyone's presence.
    var observesTheRoom: Bool {
        switch self {
        case .state(_, nil), .watch, .ping: return true
        default: return false
        }
    }
}

/// The options of `rooms`.
public struct RoomsOptions: Equatable, Sendable {
    /// The server's page size when none is asked for.
    public static let defaultLimit = 100
    /// Rooms per request, 1 to 1000.
    public var limit: Int
    /// The rooms whose names sort after this one.
    public var after: String?
    /// Every page, not only the first.
    public var all: Bool
    public var json: Bool

    public init(limit: Int = RoomsOptions.defaultLimit, after: String? = nil, all: Bool = false, json: Bool = false) {
        self.limit = limit
        self.after = after
        self.all = all
        self.json = json
    }
}

/// The options of `kick`: whom, in which room, and why.
public struct KickOptions: Equatable, Sendable {
    /// One connection by its id, or everyone of a name.
    public enum Target: Equatable, Sendable {
        case id(String)
        case name(String)
    }

    /// The most bytes of reason the server takes.
    static let maxReasonBytes = 120

    public var room: String
    public var target: Target
    public var reason: String?

    public init(room: String, target: Target, reason: String? = nil) {
        self.room = room
        self.target = target
        self.reason = reason
    }
}

/// The options of `history`.
public struct HistoryOptions: Equatable, Sendable {
    public static let defaultLimit = 100
    /// Events after this seq; nil: from the oldest one held.
    public var since: UInt64?
    /// At most this many events (fetched a page of at most `HistoryAPI.maxPage` at a time).
    public var limit: Int
    public var json: Bool

    public init(since: UInt64? = nil, limit: Int = HistoryOptions.defaultLimit, json: Bool = false) {
        self.since = since
        self.limit = limit
        self.json = json
    }
}

/// The options of `replay`.
public struct ReplayOptions: Equatable, Sendable {
    /// The seq to start from (the room as it was right after it); nil: the oldest held.
    public var from: UInt64?
    /// How many times faster than it happened.
    public var speed: Double
    /// How to draw, as for `play`.
    public var play: PlayOptions

    public init(from: UInt64? = nil, speed: Double = 1, play: PlayOptions = PlayOptions()) {
        self.from = from
        self.speed = speed
        self.play = play
    }
}

/// The options of `frame`.
public struct FrameOptions: Equatable, Sendable {
    /// The sizes and wave phases the server draws (PROTOCOL.md section 6).
    static let sizes = 16...2048
    static let phases = 0...99
    public var view: FrameView
    /// The file to write; `-` for standard output.
    public var output: String
    /// The room as it was right after this event; nil: now.
    public var seq: UInt64?
    public var width: Int?
    public var height: Int?
    /// The heart wave's phase step (0 to 99); nil: the wave at the current time.
    public var phase: Int?

    public init(view: FrameView = .scene, output: String, seq: UInt64? = nil, width: Int? = nil, height: Int? = nil,
                phase: Int? = nil) {
        self.view = view
        self.output = output
        self.seq = seq
        self.width = width
        self.height = height
        self.phase = phase
    }
}

/// The options of `play`.
public struct PlayOptions: Equatable, Sendable {
    /// How pixels become characters; nil picks from the environment.
    public var colorMode: ColorMode?
    /// The scene art file; nil fetches it from the server.
    public var artPath: String?
    /// Frames per second of the heart wave.
    public var framesPerSecond: Int

    public init(colorMode: ColorMode? = nil, artPath: String? = nil, framesPerSecond: Int = 10) {
        self.colorMode = colorMode
        self.artPath = artPath
        self.framesPerSecond = framesPerSecond
    }
}

/// How `play` draws pixels in the terminal.
public enum ColorMode: String, Equatable, Sendable, CaseIterable {
    /// `▀` half blocks with 24-bit foreground and background colours.
    case truecolor
    /// `▀` half blocks in the 16 standard ANSI colours.
    case ansi16 = "16"
    /// Plain ASCII shading, no colour.
    case none

    /// 24-bit when `COLORTERM` says so, plain when `NO_COLOR` is set or the
    /// terminal is dumb, else the 16 ANSI colours.
    public static func detect(environment: [String: String]) -> ColorMode {
        if environment["NO_COLOR"].map({ !$0.isEmpty }) == true || environment["TERM"] == "dumb" { return .none }
        let colorterm = environment["COLORTERM"]?.lowercased() ?? ""
        return colorterm == "truecolor" || colorterm == "24bit" ? .truecolor : .ansi16
    }
}
