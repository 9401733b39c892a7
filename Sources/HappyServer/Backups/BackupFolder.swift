import Foundation
import HappyCore

/// The folder backups go to (`backup.dir`, else `dataDir/backups`). Each
/// backup is named by its UTC time, `happy-20261206T210000Z.sqlite3`
/// (`-2`, `-3`… after the time when two fall in one second); only files
/// named so are counted and deleted, beyond the newest `keep`. Its file
/// work runs on the backup thread.
struct BackupFolder: Sendable {
    static let prefix = "happy-"
    static let suffix = ".sqlite3"
    /// What a copy is written under until complete (`SQLiteBackup`).
    static let partialSuffix = ".partial"
    private static let stampStyle = Date.ISO8601FormatStyle(dateSeparator: .omitted, timeSeparator: .omitted)

    let path: String
    let keep: Int

    /// Where a backup of `settings` goes: `backup.dir`, else `dataDir/backups`.
    init(settings: HappyConfig.BackupSection, dataDir: String) {
        path = settings.dir.isEmpty ? (dataDir as NSString).appendingPathComponent("backups") : settings.dir
        keep = settings.keep
    }

    /// A backup's place in time: its UTC time, then its number within that second.
    struct Order: Comparable {
        var stamp: String
        var number: Int

        static func < (a: Order, b: Order) -> Bool {
            (a.stamp, a.number) < (b.stamp, b.number)
        }
    }

    /// The order of a backup's file name; nil for any other file.
    static func order(of name: String) -> Order? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix) else { return nil }
        let middle = name.dropFirst(prefix.count).dropLast(suffix.count)
        let parts = middle.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        let stamp = String(parts[0])
        guard (try? stampStyle.parse(stamp)) != nil else { return nil }
        guard parts.count == 2 else { return Order(stamp: stamp, number: 1) }
        guard let number = Int(parts[1]), number >= 2 else { return nil }
        return Order(stamp: stamp, number: number)
    }

    /// A name for a backup made at `date` that comes after every backup of
    /// that second in `existing` (written ones and ones being written).
    static func name(at date: Date, besides existing: [String]) -> String {
        let stamp = date.formatted(stampStyle)
        let taken = existing.compactMap { name in
            order(of: name.hasSuffix(partialSuffix) ? String(name.dropLast(partialSuffix.count)) : name)
        }
        let last = taken.filter { $0.stamp == stamp }.map(\.number).max()
        return last.map { "\(prefix)\(stamp)-\($0 + 1)\(suffix)" } ?? prefix + stamp + suffix
    }

    /// The backups among `names` beyond the newest `keep`, oldest first;
    /// never `sparing` (the one just written, even when the clock went back).
    static func surplus(of names: [String], keep: Int, sparing: String? = nil) -> [String] {
        let backups = names.filter { $0 != sparing }.compactMap { name in order(of: name).map { (name, $0) } }
            .sorted { $0.1 < $1.1 }
        return backups.dropLast(max(0, keep - (sparing == nil ? 0 : 1))).map(\.0)
    }

    /// When the newest backup among `names` was made, if any.
    static func newest(of names: [String]) -> Date? {
        names.compactMap(order(of:)).max().flatMap { try? stampStyle.parse($0.stamp) }
    }

    /// The folder's file names; empty when it does not exist yet.
    func names() -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    }

    /// Makes the folder (0700: backups hold everything the database does)
    /// and returns the path for a backup made at `date`.
    func nextPath(at date: Date) throws(StoreError) -> String {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw StoreError(.io, "cannot create the backup folder \(path): \(error.localizedDescription)")
        }
        return (path as NSString).appendingPathComponent(Self.name(at: date, besides: names()))
    }

    /// Deletes the backups beyond the newest `keep`, never `sparing`, and
    /// copies a crash left unfinished (backups are written one at a time, so
    /// none is being written now); returns their paths.
    func prune(sparing: String) -> [String] {
        let kept = (sparing as NSString).lastPathComponent
        let names = names()
        let unfinished = names.filter {
            $0.hasSuffix(Self.partialSuffix) && Self.order(of: String($0.dropLast(Self.partialSuffix.count))) != nil
        }
        return (unfinished + Self.surplus(of: names, keep: keep, sparing: kept)).compactMap { name in
            let file = (path as NSString).appendingPathComponent(name)
            return unlink(file) == 0 ? file : nil
        }
    }
}
