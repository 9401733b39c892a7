import HappyClientKit
import HappyCore

/// One room of `GET /api/rooms`, and the head of `GET /api/rooms/R`.
struct RoomSummary: Equatable, Sendable {
    var room: String
    var epoch: String?
    var seq: UInt64
    /// People connected (in presence).
    var clients: Int
    var observers: Int
    /// `each` or `ticks` (PROTOCOL.md section 12).
    var delivery: String
    /// Wall-clock milliseconds of the last event; nil when the room has none.
    var lastEventTime: Int64?

    init?(_ json: JSONValue) {
        guard let room = json["room"]?.stringValue, let seq = HistoryAnswer.seq(json["seq"]),
              let clients = Self.count(json["clients"]), let observers = Self.count(json["observers"]) else { return nil }
        self.room = room
        epoch = json["epoch"]?.stringValue
        self.seq = seq
        self.clients = clients
        self.observers = observers
        delivery = json["delivery"]?.stringValue ?? "each"
        lastEventTime = json["lastEventTime"]?.doubleValue.map { Int64($0) }
    }

    static func count(_ json: JSONValue?) -> Int? {
        guard let value = json?.doubleValue, value >= 0, value < 1e15, value == value.rounded() else { return nil }
        return Int(value)
    }
}

/// One connection of `GET /api/rooms/R`.
struct ConnectionSummary: Equatable, Sendable {
    var id: String
    var name: String
    var role: String
    var observer: Bool
    var address: String
    /// Wall-clock milliseconds.
    var connectedAt: Int64
    /// Bytes queued for it and not yet sent: how far it lags.
    var queuedBytes: Int
    var resyncs: Int
    /// Intents refused by its rate limit.
    var rateLimited: Int

    init?(_ json: JSONValue) {
        guard let id = json["id"]?.stringValue, let name = json["name"]?.stringValue,
              let connectedAt = json["connectedAt"]?.doubleValue,
              let queued = RoomSummary.count(json["queuedBytes"]), let resyncs = RoomSummary.count(json["resyncs"]),
              let rateLimited = RoomSummary.count(json["rateLimited"]) else { return nil }
        self.id = id
        self.name = name
        role = json["role"]?.stringValue ?? "player"
        observer = json["observer"]?.boolValue ?? false
        address = json["address"]?.stringValue ?? ""
        self.connectedAt = Int64(connectedAt)
        queuedBytes = queued
        self.resyncs = resyncs
        self.rateLimited = rateLimited
    }
}

/// One page of `GET /api/rooms`.
struct RoomsPage: Sendable {
    var rooms: [RoomSummary]
    /// Each room's object as the server sent it.
    var texts: [String]
    /// The name to ask the next page after; nil on the last page.
    var next: String?
}

/// `GET /api/rooms/R`: the room and its connections.
struct RoomDetails: Sendable {
    var summary: RoomSummary
    var connections: [ConnectionSummary]
    /// The answer as it came.
    var text: String
}

/// The operator API (PROTOCOL.md section 13): the server's rooms, one room's
/// connections, kick and delete. Its URLs carry no room parameter: the room
/// is in the path.
struct OperatorAPI: Sendable {
    let http: ServerHTTP

    init(common: CommonOptions) {
        http = ServerHTTP(common: common)
    }

    private func url(_ path: String, _ parameters: [(String, String?)] = []) -> String {
        http.common.url.httpBase + path + QueryEncoding.query(parameters)
    }

    func rooms(limit: Int, after: String?) -> Result<RoomsPage, HTTPFailure> {
        let url = url("/api/rooms", [("limit", String(limit)), ("after", after)])
        return http.getJSON(url).flatMap { answer in
            guard case .array(let list)? = answer.json["rooms"],
                  let texts = RawJSON.arrayElements(ofKey: "rooms", in: answer.bytes), texts.count == list.count else {
                return .failure(.unreadable(url: url, reason: "not a list of rooms"))
            }
            let rooms = list.compactMap(RoomSummary.init)
            guard rooms.count == list.count else { return .failure(.unreadable(url: url, reason: "a room without its fields")) }
            return .success(RoomsPage(rooms: rooms, texts: texts.map { String(decoding: $0, as: UTF8.self) },
                                      next: answer.json["next"]?.stringValue))
        }
    }

    func room(_ name: String) -> Result<RoomDetails, HTTPFailure> {
        let url = url("/api/rooms/\(name)")
        return http.getJSON(url).flatMap { answer in
            guard let summary = RoomSummary(answer.json), case .array(let list)? = answer.json["connections"] else {
                return .failure(.unreadable(url: url, reason: "not a room"))
            }
            let connections = list.compactMap(ConnectionSummary.init)
            guard connections.count == list.count else {
                return .failure(.unreadable(url: url, reason: "a connection without its fields"))
            }
            var text = String(decoding: answer.bytes, as: UTF8.self)
            while text.last?.isWhitespace == true { text.removeLast() }
            return .success(RoomDetails(summary: summary, connections: connections, text: text))
        }
    }

    /// How many connections were closed.
    func kick(_ options: KickOptions) -> Result<Int, HTTPFailure> {
        let url = url("/api/rooms/\(options.room)/kick")
        var w = JSONWriter(capacity: 128)
        w.beginObject()
        switch options.target {
        case .id(let id): w.key("id"); w.string(id)
        case .name(let name): w.key("name"); w.string(name)
        }
        if let reason = options.reason { w.key("reason"); w.string(reason) }
        w.endObject()
        return http.getJSON(url, method: "POST", body: w.bytes).flatMap { answer in
            guard let kicked = RoomSummary.count(answer.json["kicked"]) else {
                return .failure(.unreadable(url: url, reason: "no kicked count"))
            }
            return .success(kicked)
        }
    }

    /// How many connections were closed.
    func delete(_ room: String) -> Result<Int, HTTPFailure> {
        let url = url("/api/rooms/\(room)")
        return http.getJSON(url, method: "DELETE").flatMap { answer in
            guard answer.json["deleted"]?.boolValue == true else {
                return .failure(.unreadable(url: url, reason: "the answer does not say the room was deleted"))
            }
            return .success(RoomSummary.count(answer.json["closed"]) ?? 0)
        }
    }
}
