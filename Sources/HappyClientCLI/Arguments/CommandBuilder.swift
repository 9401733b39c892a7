import HappyCore
import HappyRender

/// Turns a command's positional arguments and options into a `Command`,
/// checking values the way the server would (PROTOCOL.md section 4), so
/// that obvious mistakes never reach the network.
struct CommandBuilder {
    static let maxTimes = 1000
    static let maxPings = 100
    /// Larger magnitudes are pointless (the server clamps) and would lose precision.
    static let integerLimit = 1_000_000_000
    /// Seqs are JSON numbers: whole numbers stay exact up to 2^53 - 1.
    static let maxSeq = 9_007_199_254_740_991
    static let maxSpeed = 1000.0

    let command: CommandName
    private var positionals: [String]
    private let options: [String: String]

    /// The room of `--room` (or `HAPPY_ROOM`), for the operator's commands when no ROOM is given.
    private let room: String?

    init(command: CommandName, positionals: [String], options: [String: String], room: String? = nil) {
        self.command = command
        self.positionals = positionals
        self.options = options
        self.room = room
    }

    mutating func build() throws(UsageError) -> Command {
        let result: Command
        switch command {
        case .state: result = .state(json: options["--json"] != nil, seq: try optionalSeq("--seq"))
        case .watch: result = .watch(json: options["--json"] != nil, pointers: options["--pointers"] != nil)
        case .happiness:
            let text = try next("VALUE", "an integer, e.g. happiness 80")
            guard let value = ValueParsing.integer(text, in: -Self.integerLimit...Self.integerLimit) else {
                throw invalid("VALUE", "an integer (0 to 100; others are clamped)", text)
            }
            result = .intents(command, [.setHappiness(Double(value))])
        case .nudge:
            let field = try next("FIELD", "happiness, e.g. nudge happiness +5")
            guard field == "happiness" else {
                throw UsageError(command, "only happiness can be nudged, got \(ValueParsing.quoted(field))"
                                 + (field == "scale" ? " (use pinch FACTOR for the scale)" : ""))
            }
            let text = try next("DELTA", "an integer from -100 to 100, e.g. +5 or -5")
            guard let delta = ValueParsing.integer(text, in: SceneRules.nudgeRange) else {
                throw invalid("DELTA", "an integer from -100 to 100", text)
            }
            result = .intents(command, [.nudgeHappiness(delta)])
        case .scale:
            result = .intents(command, [.setScale(try positive("VALUE", example: "scale 1.2"))])
        case .pinch:
            result = .intents(command, [.pinch(try positive("FACTOR", example: "pinch 1.1"))])
        case .heart:
            result = .intents(command, try heartActions())
        case .dragon:
            result = .intents(command, try dragonActions())
        case .reset:
            result = .intents(command, [.reset])
        case .act:
            result = .intents(command, [try anyAction()])
        case .ping:
            let count = try optionalInteger("--count", in: 1...Self.maxPings) ?? 5
            result = .ping(count: count)
        case .play:
            result = .play(try playOptions())
        case .history:
            let limit = try optionalInteger("--limit", in: 1...Self.integerLimit) ?? HistoryOptions.defaultLimit
            result = .history(HistoryOptions(since: try optionalSeq("--since"), limit: limit,
                                             json: options["--json"] != nil))
        case .replay:
            result = .replay(ReplayOptions(from: try optionalSeq("--from"), speed: try speed(), play: try playOptions()))
        case .frame:
            result = .frame(try frameOptions())
        case .rooms:
            let limit = try optionalInteger("--limit", in: 1...Self.maxRoomsPage) ?? RoomsOptions.defaultLimit
            let after = options["--after"]
            if let after, !Names.isValidRoom(after) { throw invalid("--after", "a room name", after) }
            result = .rooms(RoomsOptions(limit: limit, after: after, all: options["--all"] != nil,
                                         json: options["--json"] != nil))
        case .room:
            result = .room(try targetRoom("the room to show, e.g. room kitchen"), json: options["--json"] != nil)
        case .kick:
            result = .kick(try kickOptions())
        case .deleteRoom:
            let name = try targetRoom("the room to delete, e.g. delete-room kitchen --yes")
            guard options["--yes"] != nil else {
                throw UsageError(command, "this closes every connection of room \(name) and erases its state and "
                                 + "history for good; add --yes to do it")
            }
            result = .deleteRoom(name)
        case .help:
            result = .help(nil)
        }
        if let extra = positionals.first {
            throw UsageError(command, "unexpected argument \(ValueParsing.quoted(extra))")
        }
        return result
    }

    // MARK: commands

    /// The most rooms the server lists in one answer.
    static let maxRoomsPage = 1000

    /// ROOM, or the room of `--room` when it is left out.
    private mutating func targetRoom(_ needs: String) throws(UsageError) -> String {
        guard !positionals.isEmpty else {
            if let room { return room }
            throw UsageError(command, "missing ROOM: \(needs)")
        }
        let text = positionals.removeFirst()
        guard Names.isValidRoom(text) else { throw invalid("ROOM", "1-64 characters of A-Z a-z 0-9 _ -", text) }
        return text
    }

    private mutating func kickOptions() throws(UsageError) -> KickOptions {
        let room = try targetRoom("the room to remove someone from, e.g. kick kitchen --name alice")
        let target: KickOptions.Target
        switch (options["--id"], options["--name"]) {
        case (let id?, nil):
            guard !id.isEmpty, id.utf8.count <= 64, !id.unicodeScalars.contains(where: \.properties.isWhitespace) else {
                throw invalid("--id", "a connection id such as c7 (happyclient room \(room) lists them)", id)
            }
            target = .id(id)
        case (nil, let name?):
            guard Names.isValidDisplayName(name) else { throw invalid("--name", "1-32 printable characters", name) }
            target = .name(name)
        case (nil, nil):
            throw UsageError(command, "say whom to remove: --id ID (one connection) or --name NAME (everyone of that name)")
        case (_?, _?):
            throw UsageError(command, "--id and --name cannot go together: one connection by id, or everyone of a name")
        }
        let reason = options["--reason"]
        if let reason {
            guard !reason.isEmpty, reason.utf8.count <= KickOptions.maxReasonBytes,
                  !reason.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw invalid("--reason", "1 to \(KickOptions.maxReasonBytes) bytes of text on one line", reason)
            }
        }
        return KickOptions(room: room, target: target, reason: reason)
    }

    private mutating func heartActions() throws(UsageError) -> [Action] {
        var actions: [Action] = []
        if !positionals.isEmpty {
            let text = positionals.removeFirst()
            guard let rate = ValueParsing.number(text) else {
                throw invalid("RATE", "a number (0 to 1; others are clamped)", text)
            }
            actions.append(.setRate(rate))
        }
        var style = HeartStyle()
        style.fillColor = try color("--fill")
        style.strokeColor = try color("--stroke")
        if let text = options["--width"] {
            guard let width = ValueParsing.number(text), SceneRules.lineWidthRange ~= width else {
                throw invalid("--width", "a number from 0 to 20", text)
            }
            style.lineWidth = width
        }
        if style != HeartStyle() { actions.append(.setStyle(style)) }
        guard !actions.isEmpty else {
            throw UsageError(command, "needs a RATE or at least one of --fill, --stroke, --width")
        }
        return actions
    }

    private mutating func dragonActions() throws(UsageError) -> [Action] {
        let text = try next("ACTION", "forward, back, hide, show or toggle")
        let action: Action
        switch text {
        case "forward": action = .dragonForward
        case "back": action = .dragonBack
        case "hide": action = .setHidden(true)
        case "show": action = .setHidden(false)
        case "toggle": action = .toggleHidden
        default: throw invalid("ACTION", "forward, back, hide, show or toggle", text)
        }
        let times = try optionalInteger("--times", in: 1...Self.maxTimes) ?? 1
        return Array(repeating: action, count: times)
    }

    /// `act ACTION [FIELD=VALUE]…`: any action of the table, each field read as its type says,
    /// then checked by the decoder the server runs (its messages are the server's).
    private mutating func anyAction() throws(UsageError) -> Action {
        let name = try next("ACTION", "an action, e.g. act \(Action.Kind.setRate.spec.wireName) value=0.5 "
                            + "(act --help lists them)")
        guard let kind = Action.Kind(wireName: name) else {
            throw invalid("ACTION", "one of \(Action.wireNames.joined(separator: ", "))", name)
        }
        let spec = kind.spec
        var members: [(key: String, value: JSONValue)] = [("action", .string(name))]
        while !positionals.isEmpty {
            let text = positionals.removeFirst()
            let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, let parameter = spec.parameters.first(where: { $0.name == parts[0] }) else {
                let fields = spec.parameters.map { "\($0.name)=VALUE" }.joined(separator: ", ")
                throw UsageError(command, "\(name) takes " + (fields.isEmpty ? "no fields" : fields)
                                 + ", got \(ValueParsing.quoted(text))")
            }
            members.append((parameter.name, try fieldValue(String(parts[1]), of: parameter)))
        }
        switch ClientMessageDecoder.decodeIntent(.object(members), id: nil) {
        case .success(let intent): return intent.action
        case .failure(let error): throw UsageError(command, error.message)
        }
    }

    /// A field's text as the JSON value its type asks for; numbers are checked by the decoder.
    private func fieldValue(_ text: String, of parameter: ParameterSpec) throws(UsageError) -> JSONValue {
        switch parameter.type {
        case .integer, .number, .positiveNumber:
            guard let number = ValueParsing.number(text) else { throw invalid(parameter.name, parameter.type.article, text) }
            return .number(number)
        case .boolean:
            guard let flag = ["true": true, "false": false][text] else { throw invalid(parameter.name, "true or false", text) }
            return .bool(flag)
        case .color:
            return .string(text)
        }
    }

    private func playOptions() throws(UsageError) -> PlayOptions {
        var play = PlayOptions()
        if options["--plain"] != nil { play.colorMode = ColorMode.none }
        if let text = options["--color"] {
            guard let mode = ColorMode(rawValue: text) else {
                throw invalid("--color", "truecolor, 16 or none", text)
            }
            if play.colorMode == nil { play.colorMode = mode }
        }
        if let path = options["--art"] {
            guard !path.isEmpty else { throw invalid("--art", "a file name", path) }
            play.artPath = path
        }
        play.framesPerSecond = try optionalInteger("--fps", in: 1...30) ?? play.framesPerSecond
        return play
    }

    private mutating func frameOptions() throws(UsageError) -> FrameOptions {
        var view = FrameView.scene
        if !positionals.isEmpty {
            let text = positionals.removeFirst()
            guard let named = FrameView(rawValue: text) else { throw invalid("VIEW", "face, heart, dragon or scene", text) }
            view = named
        }
        guard let output = options["--out"] else {
            throw UsageError(command, "missing --out FILE: where to write the PNG (- for standard output)")
        }
        guard !output.isEmpty else { throw invalid("--out", "a file name (- for standard output)", output) }
        let sizes = FrameOptions.sizes
        return FrameOptions(view: view, output: output, seq: try optionalSeq("--seq"),
                            width: try optionalInteger("--width", in: sizes), height: try optionalInteger("--height", in: sizes),
                            phase: try optionalInteger("--phase", in: FrameOptions.phases))
    }

    private func speed() throws(UsageError) -> Double {
        guard let text = options["--speed"] else { return 1 }
        guard let value = ValueParsing.number(text), value > 0, value <= Self.maxSpeed else {
            throw invalid("--speed", "a number greater than 0, at most 1000 (1 is as it happened, 4 four times faster)", text)
        }
        return value
    }

    // MARK: values

    /// A seq: a whole number, 0 or more.
    private func optionalSeq(_ option: String) throws(UsageError) -> UInt64? {
        guard let text = options[option] else { return nil }
        guard let value = ValueParsing.integer(text, in: 0...Self.maxSeq) else {
            throw invalid(option, "a seq (a whole number, 0 or more)", text)
        }
        return UInt64(value)
    }

    private mutating func next(_ name: String, _ needs: String) throws(UsageError) -> String {
        guard !positionals.isEmpty else { throw UsageError(command, "missing \(name): \(needs)") }
        return positionals.removeFirst()
    }

    private mutating func positive(_ name: String, example: String) throws(UsageError) -> Double {
        let text = try next(name, "a number greater than 0, e.g. \(example)")
        guard let value = ValueParsing.number(text), value > 0 else {
            throw invalid(name, "a number greater than 0", text)
        }
        return value
    }

    private func color(_ option: String) throws(UsageError) -> RGBColor? {
        guard let text = options[option] else { return nil }
        guard let color = ValueParsing.color(text) else { throw invalid(option, "a colour like #f00 or #ff0000", text) }
        return color
    }

    private func optionalInteger(_ option: String, in range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let text = options[option] else { return nil }
        guard let value = ValueParsing.integer(text, in: range) else {
            throw invalid(option, "a whole number from \(range.lowerBound) to \(range.upperBound)", text)
        }
        return value
    }

    private func invalid(_ name: String, _ needs: String, _ text: String) -> UsageError {
        UsageError(command, "\(name) needs \(needs), got \(ValueParsing.quoted(text))")
    }
}
