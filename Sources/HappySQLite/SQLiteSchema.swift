import CSQLite
import HappyCore

/// The layout of the history on disk, and its migration.
///
/// Schema 2 keeps a room's recent events as one row per commit (the events
/// of one loop turn, newline-separated: event JSON never holds a raw
/// newline), keyed by the last seq. A group commit then writes one row per
/// room instead of one per event, and trimming deletes whole old rows.
/// Schema 1 kept one row per event; it is converted on open.
enum SQLiteSchema {
    static let version = "2"

    static func prepareHistory(_ database: SQLiteDatabase) throws(SQLiteError) {
        let schema = try database.scalarText("SELECT value FROM meta WHERE key = 'schema'")
        let create = """
            CREATE TABLE IF NOT EXISTS batches (
                room TEXT NOT NULL, last INTEGER NOT NULL, first INTEGER NOT NULL, events BLOB NOT NULL,
                PRIMARY KEY (room, last)) WITHOUT ROWID;
            """
        switch schema {
        case nil:
            try database.execute(create + "INSERT INTO meta (key, value) VALUES ('schema', '\(version)');")
        case "1":
            try database.execute("""
                BEGIN IMMEDIATE;
                \(create)
                INSERT INTO batches (room, last, first, events) SELECT room, seq, seq, json FROM events;
                DROP TABLE events;
                UPDATE meta SET value = '\(version)' WHERE key = 'schema';
                COMMIT;
                """)
        default:
            break  // the caller checks the version
        }
    }

    static func pack(_ events: [StoredEvent]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(events.reduce(events.count) { $0 + $1.json.count })
        for (index, event) in events.enumerated() {
            if index > 0 { bytes.append(0x0A) }
            bytes += event.json
        }
        return bytes
    }

    static func events(first: UInt64, packed: [UInt8]) -> [StoredEvent] {
        packed.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated().map { index, json in
            StoredEvent(seq: first + UInt64(index), json: Array(json))
        }
    }
}
