import Foundation
import HappyCore
import HappySQLite
import XCTest

/// Figures for the SQLite history: bytes on disk per event and the file's
/// size for a room at 100,000 events, the time of `history` (1000 events)
/// and `pastState` in such a room, and commit throughput of that room against
/// rooms at limits of 10 and 1000 and a room below its limit (no pruning),
/// with 1 and 10 events per commit. Without fsync the rates are per second
/// of the committing thread's processor time (the store's own cost, steadier
/// on a shared machine); with fsync, per second of elapsed time. Takes about
/// half a minute, so it runs only with HAPPY_SQLITE_MEASURE=1, and prints
/// its figures ("measure: ..."); build with -c release for real numbers.
final class SQLiteHistoryMeasurements: XCTestCase {
    private var directories: [String] = []

    override func tearDown() {
        for directory in directories { try? FileManager.default.removeItem(atPath: directory) }
    }

    private func newDirectory() -> String {
        let directory = HistoryFixture.temporaryDirectory("happy-measure")
        directories.append(directory)
        return directory
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted[sorted.count / 2]
    }

    private static func report(_ line: String) {
        print("measure: \(line)")
    }

    /// Commits of `perCommit` events from `start` on, `count` events in all, built before they are timed.
    private static func commits(_ room: String, from start: UInt64, count: UInt64, perCommit: UInt64) -> [RoomCommit] {
        stride(from: start, to: start + count, by: Int(perCommit)).map {
            HistoryFixture.commit(room, from: $0, to: min(start + count - 1, $0 + perCommit - 1))
        }
    }

    /// This thread's processor time so far, in seconds: other work on the
    /// machine does not count, as it does in the elapsed time.
    private static func threadTime() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Events recorded per second of this thread's processor time (the
    /// kernel's share of the writes included).
    private static func rate(_ store: SQLiteRoomStore, _ commits: [RoomCommit]) throws -> Double {
        let events = commits.reduce(0) { $0 + $1.events.count }
        let start = threadTime()
        for commit in commits { try store.commit([commit]) }
        return Double(events) / (threadTime() - start)
    }

    /// Events recorded per second of elapsed time (with fsync, the disk's syncs dominate).
    private static func elapsedRate(_ store: SQLiteRoomStore, _ commits: [RoomCommit]) throws -> Double {
        let events = commits.reduce(0) { $0 + $1.events.count }
        let clock = ContinuousClock()
        let start = clock.now
        for commit in commits { try store.commit([commit]) }
        return Double(events) / seconds(clock.now - start)
    }

    func testMeasureARoomAtOneHundredThousandEvents() throws {
        guard ProcessInfo.processInfo.environment["HAPPY_SQLITE_MEASURE"] == "1" else {
            throw XCTSkip("set HAPPY_SQLITE_MEASURE=1 to measure")
        }
        let limit: UInt64 = 100_000
        let clock = ContinuousClock()

        // Fill: a room up to the limit, 10 events per commit.
        let full = newDirectory()
        var store = try SQLiteRoomStore(directory: full, historySize: 1000, historyLimit: Int(limit), fsync: false)
        try store.commit([HistoryFixture.creation()])
        var fillRates: [Double] = []
        for chunk in stride(from: 1 as UInt64, through: limit, by: 20_000) {
            fillRates.append(try Self.rate(store, Self.commits("lobby", from: chunk, count: 20_000, perCommit: 10)))
        }
        store.close()
        let path = (full as NSString).appendingPathComponent(SQLiteRoomStore.fileName)
        let bytes = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let eventBytes = HistoryFixture.event(50_000).json.count
        Self.report("fill to \(limit) events, 10 per commit: \(fillRates.map { Int($0) }) events per processor second, by 20,000")
        Self.report("database at \(limit) events: \(bytes) bytes, \(bytes / Int(limit)) bytes per event "
            + "(event JSON \(eventBytes) bytes, label \(HistoryFixture.label(after: 50_000).utf8.count))")
        if let tables = try? HistoryFixture.sqlite(full, "SELECT name, sum(pgsize) FROM dbstat GROUP BY name") {
            Self.report("by table and index: \(tables.split(separator: "\n").joined(separator: ", "))")
        }

        let opening = clock.now
        store = try SQLiteRoomStore(directory: full, historySize: 1000, historyLimit: Int(limit), fsync: false)
        Self.report(String(format: "open (integrity check included): %.3f s", Self.seconds(clock.now - opening)))

        // Reads at random places in the room.
        var generator = SystemRandomNumberGenerator()
        var historyTimes: [Double] = []
        for _ in 0..<200 {
            let since = UInt64.random(in: 0...(limit - 1000), using: &generator)
            let start = clock.now
            let page = try XCTUnwrap(try store.history(ofRoom: "lobby", after: since, limit: 1000))
            historyTimes.append(Self.seconds(clock.now - start))
            XCTAssertEqual(page.events.count, 1000)
        }
        var pastTimes: [Double] = []
        for _ in 0..<2000 {
            let seq = UInt64.random(in: 1...limit, using: &generator)
            let start = clock.now
            let lookup = try store.pastState(ofRoom: "lobby", at: seq)
            pastTimes.append(Self.seconds(clock.now - start))
            guard case .found = lookup else { return XCTFail("no state at \(seq)") }
        }
        Self.report(String(format: "history of 1000 events: median %.2f ms, p90 %.2f ms",
                           Self.median(historyTimes) * 1e3, historyTimes.sorted()[historyTimes.count * 9 / 10] * 1e3))
        Self.report(String(format: "pastState: median %.1f µs, p90 %.1f µs",
                           Self.median(pastTimes) * 1e6, pastTimes.sorted()[pastTimes.count * 9 / 10] * 1e6))

        // Commit throughput in alternating rounds (a shared machine drifts):
        // the full room above, rooms at limits of 10 and 1000, and a room
        // below its limit (nothing pruned).
        store.close()
        let rooms: [(name: String, directory: String, limit: Int)] = [
            ("limit 100000 at the limit", full, Int(limit)), ("limit 10", newDirectory(), 10),
            ("limit 1000 at the limit", newDirectory(), 1000), ("limit 1000000 below it (no pruning)", newDirectory(), 1_000_000),
        ]
        var next: [UInt64] = [limit + 1, 1001, 1001, 1001]
        for room in rooms.dropFirst() {
            let other = try SQLiteRoomStore(directory: room.directory, historySize: 10, historyLimit: room.limit, fsync: false)
            try other.commit([HistoryFixture.creation()])
            for commit in Self.commits("lobby", from: 1, count: 1000, perCommit: 10) { try other.commit([commit]) }
            other.close()
        }
        for (perCommit, fsync) in [(1 as UInt64, false), (10, false), (1, true)] {
            let stores = try rooms.map {
                try SQLiteRoomStore(directory: $0.directory, historySize: 10, historyLimit: $0.limit, fsync: fsync)
            }
            defer { for store in stores { store.close() } }
            let count: UInt64 = fsync ? 200 : perCommit == 1 ? 3_000 : 10_000
            var rates: [[Double]] = Array(repeating: [], count: rooms.count)
            for _ in 0..<9 {
                for (index, store) in stores.enumerated() {
                    let commits = Self.commits("lobby", from: next[index], count: count, perCommit: perCommit)
                    rates[index].append(try fsync ? Self.elapsedRate(store, commits) : Self.rate(store, commits))
                    next[index] += count
                }
            }
            let medians = rates.map(Self.median)
            let figures = zip(rooms, medians).map { room, rate in
                String(format: "%@ %.0f (%+.1f%%)", room.name, rate, (rate / medians[0] - 1) * 100)
            }
            Self.report("commits of \(perCommit) event(s), \(fsync ? "fsync on, events per second" : "events per processor second"), "
                + "median of 9 alternating rounds: " + figures.joined(separator: ", "))
            XCTAssertEqual(try stores[0].history(ofRoom: "lobby", after: 0, limit: 1)?.first, next[0] - limit)
            XCTAssertEqual(try stores[1].history(ofRoom: "lobby", after: 0, limit: 100)?.events.count, 10)
        }
    }
}
