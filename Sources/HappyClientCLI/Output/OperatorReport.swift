import HappyClientKit
import HappyCore

/// What the operator's commands print: aligned tables of rooms and
/// connections, and one line per action.
enum OperatorReport {
    /// The `rooms` table, with a header line.
    static func rooms(_ rooms: [RoomSummary], nowMilliseconds now: Int64) -> [String] {
        TextTable(headers: ["ROOM", "PEOPLE", "OBSERVERS", "SEQ", "DELIVERY", "LAST EVENT"],
                  rightAligned: [1, 2, 3],
                  rows: rooms.map { room in
                      [room.room, String(room.clients), String(room.observers), String(room.seq), room.delivery,
                       room.lastEventTime.map { age(now - $0) + " ago" } ?? "none"]
                  }).lines
    }

    /// What `room R` prints: the room's line, who is here, and a table of its connections.
    static func room(_ details: RoomDetails, nowMilliseconds now: Int64) -> [String] {
        let room = details.summary
        let last = room.lastEventTime.map { age(now - $0) + " ago" } ?? "none"
        var lines = [
            "room     \(room.room)   seq \(room.seq)   epoch \(room.epoch ?? "none")   delivery \(room.delivery)   last event \(last)",
            "here     \(plural(room.clients, "person", "people")), \(plural(room.observers, "observer", "observers"))",
        ]
        guard !details.connections.isEmpty else { return lines + ["nobody is connected"] }
        lines.append("")
        lines += TextTable(headers: ["ID", "NAME", "KIND", "ROLE", "ADDRESS", "CONNECTED", "QUEUED", "RESYNCS", "RATE-LIMITED"],
                           rightAligned: [5, 6, 7, 8],
                           rows: details.connections.map { connection in
                               [connection.id, connection.name, connection.observer ? "observer" : "person", connection.role,
                                connection.address, age(now - connection.connectedAt), bytes(connection.queuedBytes),
                                String(connection.resyncs), String(connection.rateLimited)]
                           }).lines
        return lines
    }

    /// `kicked 1 connection (id c7) from room kitchen`
    static func kicked(_ count: Int, _ options: KickOptions) -> String {
        let who: String
        switch options.target {
        case .id(let id): who = "id \(id)"
        case .name(let name): who = "named \(name)"
        }
        guard count > 0 else { return "nobody to kick: no connection \(who) in room \(options.room)" }
        return "kicked \(plural(count, "connection", "connections")) (\(who)) from room \(options.room)"
    }

    /// `deleted room kitchen: 2 connections closed; it starts again at seq 0 with a new epoch`
    static func deleted(_ room: String, closed: Int) -> String {
        "deleted room \(room): \(plural(closed, "connection", "connections")) closed; "
            + "it starts again at seq 0 with a new epoch"
    }

    /// `45 s`, `12 min`, `3 h`, `2 d`: how long, to the unit that matters.
    static func age(_ milliseconds: Int64) -> String {
        let seconds = max(0, milliseconds / 1000)
        if seconds < 120 { return "\(seconds) s" }
        if seconds < 7200 { return "\(seconds / 60) min" }
        if seconds < 172_800 { return "\(seconds / 3600) h" }
        return "\(seconds / 86400) d"
    }

    /// `0 B`, `812 B`, `12.5 KB`, `3.1 MB`
    static func bytes(_ count: Int) -> String {
        if count < 1000 { return "\(count) B" }
        if count < 1_000_000 { return Describe.number((Double(count) / 100).rounded() / 10) + " KB" }
        return Describe.number((Double(count) / 100_000).rounded() / 10) + " MB"
    }

    static func plural(_ count: Int, _ one: String, _ many: String) -> String {
        "\(count) \(count == 1 ? one : many)"
    }
}

/// Columns padded to their widest cell, two spaces apart.
struct TextTable {
    var headers: [String]
    /// Columns whose cells line up on the right (numbers).
    var rightAligned: Set<Int>
    var rows: [[String]]

    var lines: [String] {
        let all = [headers] + rows
        let widths = headers.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { cells in
            var line = ""
            for (column, cell) in cells.enumerated() {
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                let last = column == cells.count - 1
                if column > 0 { line += "  " }
                line += rightAligned.contains(column) ? padding + cell : cell + (last ? "" : padding)
            }
            return line
        }
    }
}
