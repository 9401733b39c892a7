import HappyClientKit
import HappyCore

/// The operator's commands over the operator API (PROTOCOL.md section 13):
/// `rooms`, `room`, `kick`, `delete-room`.
extension CommandContext {
    /// Prints the rooms a page at a time; with `all`, every page.
    func runRooms(_ options: RoomsOptions) -> Int32 {
        let api = OperatorAPI(common: common)
        var after = options.after
        var rooms: [RoomSummary] = []
        var more: String?
        repeat {
            let page: RoomsPage
            switch api.rooms(limit: options.limit, after: after) {
            case .failure(let failure): return fail(failure)
            case .success(let answer): page = answer
            }
            if options.json { for text in page.texts { console.out(text) } }
            rooms += page.rooms
            // A page that does not move on (which the protocol rules out) ends it too.
            guard let next = page.next, next > after ?? "" else {
                more = nil
                break
            }
            more = next
            after = next
        } while options.all
        if !options.json && !rooms.isEmpty {
            for line in OperatorReport.rooms(rooms, nowMilliseconds: SystemTime.wallMilliseconds()) { console.out(line) }
        }
        if rooms.isEmpty {
            console.err("happyclient: no rooms in memory on this server" + (options.after.map { " after \($0)" } ?? ""))
        }
        if let more {
            console.err("happyclient: more rooms after \(more): happyclient rooms --after \(more) (or --all)")
        }
        return ExitStatus.success.rawValue
    }

    func runRoom(_ name: String, json: Bool) -> Int32 {
        switch OperatorAPI(common: common).room(name) {
        case .failure(let failure): return fail(failure)
        case .success(let details):
            if json {
                console.out(details.text)
            } else {
                for line in OperatorReport.room(details, nowMilliseconds: SystemTime.wallMilliseconds()) { console.out(line) }
            }
            return ExitStatus.success.rawValue
        }
    }

    func runKick(_ options: KickOptions) -> Int32 {
        switch OperatorAPI(common: common).kick(options) {
        case .failure(let failure): return fail(failure)
        case .success(let count):
            console.out(OperatorReport.kicked(count, options))
            return ExitStatus.success.rawValue
        }
    }

    func runDeleteRoom(_ room: String) -> Int32 {
        switch OperatorAPI(common: common).delete(room) {
        case .failure(let failure): return fail(failure)
        case .success(let closed):
            console.out(OperatorReport.deleted(room, closed: closed))
            return ExitStatus.success.rawValue
        }
    }
}
