import Foundation
import HappyClientKit
import HappyCore

/// The commands that read the room's past over HTTP (PROTOCOL.md section
/// 11): `history`, `state --seq`, and `frame`.
extension CommandContext {
    /// Prints the events after `since`, a page at a time, up to `limit` of them.
    func runHistory(_ options: HistoryOptions) -> Int32 {
        let api = HistoryAPI(common: common)
        let lines = EventLines(offsetSeconds: TimeZone.current.secondsFromGMT())
        var cursor = options.since
        var remaining = options.limit
        var epoch: String?
        var printed = 0
        var roomSeq: UInt64 = 0
        var room = common.room ?? ""
        while remaining > 0 {
            let page: HistoryAnswer
            switch api.page(since: cursor, limit: min(remaining, HistoryAPI.maxPage)) {
            case .failure(let failure): return fail(failure)
            case .success(let answer): page = answer
            }
            roomSeq = page.seq
            room = page.room
            if let epoch, page.epoch != epoch {
                console.err("happyclient: the room's history was reset while it was read (epoch \(page.epoch)); "
                            + "stopped after seq \(cursor ?? 0)")
                return ExitStatus.refused.rawValue
            }
            if epoch == nil {
                epoch = page.epoch
                if let note = HistoryNotes.start(since: options.since, first: page.first) { console.err("happyclient: \(note)") }
            }
            let events = page.events.prefix(remaining)
            for entry in events { console.out(options.json ? entry.text : lines.event(entry.event)) }
            printed += events.count
            remaining -= events.count
            // Done at the room's seq; a page that does not move on (which the protocol rules out) ends it too.
            guard let last = events.last?.event.seq, last < page.seq, last > cursor ?? 0 else { break }
            cursor = last
        }
        if printed == 0 {
            let isNew = roomSeq == 0 && api.isNewRoom()
            console.err("happyclient: " + (isNew ? HistoryNotes.newRoom(room)
                                                  : HistoryNotes.nothing(since: options.since, roomSeq: roomSeq)))
        }
        return ExitStatus.success.rawValue
    }

    /// Prints the room as it was right after event `seq`.
    func runPastState(seq: UInt64, json: Bool) -> Int32 {
        switch HistoryAPI(common: common).pastState(seq: seq) {
        case .failure(let failure): return fail(failure)
        case .success(let past):
            console.out(json ? past.text : StateReport.past(past))
            return ExitStatus.success.rawValue
        }
    }

    /// Writes a server-rendered frame to a file (or standard output).
    func runFrame(_ options: FrameOptions) -> Int32 {
        let png: [UInt8]
        switch HistoryAPI(common: common).frame(options) {
        case .failure(let failure): return fail(failure)
        case .success(let bytes): png = bytes
        }
        if options.output == "-" {
            var bytes = png
            FileDescriptor.writeAll(1, &bytes)
            return ExitStatus.success.rawValue
        }
        if let problem = FileDescriptor.save(png, toFile: options.output) {
            console.err("happyclient: frame: cannot write \(options.output): \(problem)")
            return ExitStatus.cannotWrite.rawValue
        }
        console.out(HistoryNotes.wrote(options, png: png))
        return ExitStatus.success.rawValue
    }

    /// Prints why an HTTP request failed; returns the exit code for it.
    func fail(_ failure: HTTPFailure) -> Int32 {
        console.err("happyclient: \(failure)")
        return failure.exitStatus.rawValue
    }
}

/// The notes of the history commands.
enum HistoryNotes {
    /// `history starts at seq 40 (events 11–39 are no longer held)` when
    /// `since` asks for events older than the oldest held.
    static func start(since: UInt64?, first: UInt64) -> String? {
        guard let since, since + 1 < first else { return nil }
        let missing = since + 1 == first - 1 ? "event \(since + 1) is" : "events \(since + 1)–\(first - 1) are"
        return "history starts at seq \(first) (\(missing) no longer held)"
    }

    /// A room without history or people: most likely a mistyped name, which the server takes as a new room.
    static func newRoom(_ room: String) -> String {
        "room \(room) is new: nobody here, no history"
    }

    /// `no events after seq 12 (the room is at seq 12)`
    static func nothing(since: UInt64?, roomSeq: UInt64) -> String {
        since.map { "no events after seq \($0) (the room is at seq \(roomSeq))" }
            ?? "no events held (the room is at seq \(roomSeq))"
    }

    /// `wrote scene.png: scene at seq 5, 375×180 pixels, 9012 bytes`
    static func wrote(_ options: FrameOptions, png: [UInt8]) -> String {
        let at = options.seq.map { " at seq \($0)" } ?? ""
        let size = PNGSize(png).map { ", \($0.width)×\($0.height) pixels" } ?? ""
        return "wrote \(options.output): \(options.view.rawValue)\(at)\(size), \(png.count) bytes"
    }
}
