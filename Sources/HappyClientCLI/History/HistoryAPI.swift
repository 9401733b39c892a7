import HappyClientKit
import HappyCore
import HappyRender

/// One answer of `GET /api/history` (PROTOCOL.md section 11).
struct HistoryAnswer: Sendable {
    /// One event: its exact text, as it was broadcast, and what it says.
    struct Entry: Sendable {
        var text: String
        var event: EventMessage
    }

    var room: String
    var epoch: String
    /// The room's seq when the page was read.
    var seq: UInt64
    /// The oldest seq still held.
    var first: UInt64
    var events: [Entry]

    /// Reads an answer; nil when it is not one.
    init?(bytes: [UInt8]) {
        guard let json = try? JSONParser.parse(bytes, maxDepth: 64), json.isObject,
              let room = json["room"]?.stringValue, let epoch = json["epoch"]?.stringValue,
              let seq = Self.seq(json["seq"]), let first = Self.seq(json["first"]),
              case .array(let list)? = json["events"],
              let texts = RawJSON.arrayElements(ofKey: "events", in: bytes), texts.count == list.count else { return nil }
        var events: [Entry] = []
        for (value, text) in zip(list, texts) {
            guard case .event(let event) = ServerMessage.decode(value) else { return nil }
            events.append(Entry(text: String(decoding: text, as: UTF8.self), event: event))
        }
        self.room = room
        self.epoch = epoch
        self.seq = seq
        self.first = first
        self.events = events
    }

    /// A seq read from JSON: a whole number 0 or more.
    static func seq(_ json: JSONValue?) -> UInt64? {
        guard let value = json?.doubleValue, value >= 0, value < 9.007_199_254_740_992e15, value == value.rounded() else {
            return nil
        }
        return UInt64(value)
    }
}

/// One answer of `GET /api/state?seq=N`: the room right after event N.
struct PastStateAnswer: Sendable {
    var room: String
    var epoch: String
    var seq: UInt64
    var state: Scene
    /// The dragon's status label then.
    var dragonStatus: String
    /// The answer's exact text.
    var text: String

    init?(bytes: [UInt8]) {
        guard let json = try? JSONParser.parse(bytes, maxDepth: 64), json.isObject,
              let room = json["room"]?.stringValue, let epoch = json["epoch"]?.stringValue,
              let seq = HistoryAnswer.seq(json["seq"]), let state = json["state"].flatMap(Scene.init(json:)),
              let dragonStatus = json["dragonStatus"]?.stringValue else { return nil }
        self.room = room
        self.epoch = epoch
        self.seq = seq
        self.state = state
        self.dragonStatus = dragonStatus
        var text = String(decoding: bytes, as: UTF8.self)
        while text.last?.isWhitespace == true { text.removeLast() }
        self.text = text
    }
}

/// The routes of a room's past (PROTOCOL.md section 11), for the room of the options.
struct HistoryAPI: Sendable {
    /// The most events one request may ask for.
    static let maxPage = 1000

    let http: ServerHTTP

    init(common: CommonOptions) {
        http = ServerHTTP(common: common)
    }

    /// Events after `since` (default: from the oldest held), at most `limit` (1 to `maxPage`).
    func page(since: UInt64?, limit: Int) -> Result<HistoryAnswer, HTTPFailure> {
        let url = http.url("/api/history", [("since", since.map(String.init)), ("limit", String(limit))])
        return http.get(url).flatMap { bytes in
            guard let page = HistoryAnswer(bytes: bytes) else {
                return .failure(.unreadable(url: url, reason: "not a history page"))
            }
            return .success(page)
        }
    }

    /// The room as it was right after event `seq`.
    func pastState(seq: UInt64) -> Result<PastStateAnswer, HTTPFailure> {
        let url = http.url("/api/state", [("seq", String(seq))])
        return http.get(url).flatMap { bytes in
            guard let past = PastStateAnswer(bytes: bytes) else {
                return .failure(.unreadable(url: url, reason: "not a past state"))
            }
            return .success(past)
        }
    }

    /// Whether the room has neither events nor people (`/api/state`): a new
    /// room, or a mistyped name. False when that cannot be read.
    func isNewRoom() -> Bool {
        guard case .success(let answer) = http.getJSON(http.url("/api/state")) else { return false }
        return answer.json["seq"]?.doubleValue == 0 && answer.json["presenceCount"]?.doubleValue == 0
    }

    /// The PNG of `/frame/{view}.png`, now or at `options.seq`.
    func frame(_ options: FrameOptions) -> Result<[UInt8], HTTPFailure> {
        let url = http.url("/frame/\(options.view.rawValue).png", [
            ("seq", options.seq.map(String.init)), ("w", options.width.map(String.init)),
            ("h", options.height.map(String.init)), ("phase", options.phase.map(String.init)),
        ])
        return http.get(url).flatMap { bytes in
            guard PNGSize(bytes) != nil else { return .failure(.unreadable(url: url, reason: "not a PNG image")) }
            return .success(bytes)
        }
    }
}

/// The pixel size in a PNG's header.
struct PNGSize: Equatable {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    var width: Int
    var height: Int

    /// Nil when `bytes` do not start like a PNG (signature, then the IHDR chunk).
    init?(_ bytes: [UInt8]) {
        guard bytes.count >= 24, Array(bytes[0..<8]) == Self.signature, Array(bytes[12..<16]) == Array("IHDR".utf8) else {
            return nil
        }
        func integer(at offset: Int) -> Int {
            bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
        }
        width = integer(at: 16)
        height = integer(at: 20)
    }
}
