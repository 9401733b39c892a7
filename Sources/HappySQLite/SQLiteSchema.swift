import CSQLite
import HappyCore

/// The layout on disk, and its migration from older layouts.
///
/// Schema 3 (PROTOCOL.md section 11): `events` holds one row per event with
/// the dragon label right after it, in a rowid table with a unique index on
/// (room, seq) through which every read and write finds its rows. `rooms`
/// holds each room's epoch, seq and scene, and `base_seq`, the seq just
/// before the oldest event still held (`first` - 1). The room's rows are its
/// events from `base_seq` to `seq`: the row at `base_seq` is the newest
/// event pushed out of the history, kept for its state and label (it is not
/// listed by `history`). While the base is not an event (a new room at seq
/// 0, or a past that restarted from the room's state), `base_scene` and
/// `base_status` hold its state and label.
///
/// Schema 2 kept a room's recent events as one packed row per commit, and
/// schema 1 one row per event; neither had labels. Both are converted on
/// open, in one transaction.
enum SQLiteSchema {
    static let version = "3"
    /// Layouts the store opens: the current one, and the older ones it converts.
    static let readable: Set<String> = ["1", "2", version]

    private static let createRooms = """
        CREATE TABLE IF NOT EXISTS rooms (
            name TEXT PRIMARY KEY, epoch TEXT NOT NULL, seq INTEGER NOT NULL, scene TEXT NOT NULL,
            base_seq INTEGER NOT NULL DEFAULT 0, base_scene TEXT NOT NULL DEFAULT '',
            base_status TEXT NOT NULL DEFAULT '');
        """
    private static let createEvents = """
        CREATE TABLE events (room TEXT NOT NULL, seq INTEGER NOT NULL, status TEXT NOT NULL, json BLOB NOT NULL);
        CREATE UNIQUE INDEX events_by_room_seq ON events (room, seq);
        """

    /// Creates the tables of a new database, or converts an older one.
    /// Leaves a newer (unknown) version alone: the caller refuses it.
    static func prepare(_ database: SQLiteDatabase) throws(SQLiteError) {
        try database.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        switch try database.scalarText("SELECT value FROM meta WHERE key = 'schema'") {
        case nil:
            try database.transaction(immediate: true) { () throws(SQLiteError) in
                try database.execute(createRooms + createEvents
                    + "INSERT INTO meta (key, value) VALUES ('schema', '\(version)');")
            }
        case "1":
            try migrate(database, from: .onePerEvent)
        case "2":
            try migrate(database, from: .onePerCommit)
        default:
            break
        }
        // Added beside any schema: new databases and older ones get it alike.
        try database.execute(SQLiteWebhookOutbox.createTable)
    }

    /// How an older schema kept its events.
    private enum OldEvents {
        /// Schema 1: `events (room, seq, json)`, one row per event.
        case onePerEvent
        /// Schema 2: `batches (room, last, first, events)`, one packed row per commit.
        case onePerCommit
    }

    /// Converts schema 1 or 2. A room keeps the newest of its events that
    /// run without a gap up to its seq; the oldest of them becomes the base
    /// (the state before it is not recorded), so `history` lists the others.
    /// A room without events gets its current state as the base. Old events
    /// get "" as their label (the initial label, as far as `pastState` tells).
    private static func migrate(_ database: SQLiteDatabase, from old: OldEvents) throws(SQLiteError) {
        try database.transaction(immediate: true) { () throws(SQLiteError) in
            let oldTable: String
            switch old {
            case .onePerEvent:
                oldTable = "events_schema1"
                try database.execute("ALTER TABLE events RENAME TO events_schema1")
            case .onePerCommit:
                oldTable = "batches"
            }
            try database.execute("""
                ALTER TABLE rooms ADD COLUMN base_seq INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE rooms ADD COLUMN base_scene TEXT NOT NULL DEFAULT '';
                ALTER TABLE rooms ADD COLUMN base_status TEXT NOT NULL DEFAULT '';
                """ + createEvents)
            let selectRooms = try database.prepare("SELECT name, seq, scene FROM rooms")
            var rooms: [(name: String, seq: UInt64, scene: String)] = []
            while try selectRooms.step() {
                rooms.append((selectRooms.text(0), UInt64(selectRooms.int64(1)), selectRooms.text(2)))
            }
            selectRooms.finalize()
            let selectOld = try database.prepare(old == .onePerEvent
                ? "SELECT seq, json FROM events_schema1 WHERE room = ?1 ORDER BY seq"
                : "SELECT first, events FROM batches WHERE room = ?1 ORDER BY last")
            let insert = try database.prepare("INSERT INTO events (room, seq, status, json) VALUES (?1, ?2, '', ?3)")
            let setBase = try database.prepare(
                "UPDATE rooms SET base_seq = ?2, base_scene = ?3, base_status = '' WHERE name = ?1")
            defer { for statement in [selectOld, insert, setBase] { statement.finalize() } }
            for room in rooms {
                var events: [StoredEvent] = []
                try selectOld.bind(1, room.name)
                while try selectOld.step() {
                    let seq = UInt64(selectOld.int64(0))
                    switch old {
                    case .onePerEvent: events.append(StoredEvent(seq: seq, json: selectOld.blob(1)))
                    case .onePerCommit: events += Self.events(first: seq, packed: selectOld.blob(1))
                    }
                }
                selectOld.reset()
                let held = heldTail(of: events, endingAt: room.seq)
                for event in held {
                    try insert.bind(1, room.name)
                    try insert.bind(2, Int64(event.seq))
                    try insert.bind(3, blob: event.json)
                    try insert.run()
                }
                // The oldest event is the base (its row holds the state then);
                // without events, the room's current state is.
                try setBase.bind(1, room.name)
                try setBase.bind(2, Int64(held.first?.seq ?? room.seq))
                try setBase.bind(3, held.isEmpty ? room.scene : "")
                try setBase.run()
            }
            try database.execute("""
                DROP TABLE \(oldTable);
                UPDATE meta SET value = '\(version)' WHERE key = 'schema';
                """)
        }
    }

    /// Of `events` (in seq order), the newest that run without a gap up to `seq`, oldest first.
    static func heldTail(of events: [StoredEvent], endingAt seq: UInt64) -> ArraySlice<StoredEvent> {
        let events = events.filter { $0.seq <= seq }
        var start = events.endIndex
        var expected = seq
        while start > events.startIndex, expected > 0, events[start - 1].seq == expected {
            start -= 1
            expected -= 1
        }
        return events[start...]
    }

    /// A scene as stored in the `scene` and `base_scene` columns.
    static func sceneText(_ scene: Scene) -> String {
        String(decoding: ServerMessageEncoder.sceneJSON(scene), as: UTF8.self)
    }

    /// A scene read back from a `scene` or `base_scene` column.
    static func scene(fromText text: String) -> Scene? {
        (try? JSONParser.parse(text)).flatMap(Scene.init(json:))
    }

    /// The events of a schema 2 row: their JSON, newline-separated.
    static func events(first: UInt64, packed: [UInt8]) -> [StoredEvent] {
        packed.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated().map { index, json in
            StoredEvent(seq: first + UInt64(index), json: Array(json))
        }
    }
}
