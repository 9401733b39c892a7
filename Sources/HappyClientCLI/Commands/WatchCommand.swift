import Foundation
import HappyClientKit
import HappyCore
import Synchronization

/// `watch`: prints the room's events and presence (and, asked to, the
/// others' pointers) as they come, across reconnects, until interrupted or
/// refused. Reads the room's `wire` sequence: each message as the server sent it.
extension CommandContext {
    func runWatch(json: Bool, pointers: Bool) -> Int32 {
        let end = Latch<WatchEnd>()
        let room = HappyRoom(configuration: common.sessionConfiguration(reconnects: true), loop: loop)
        let printer = WatchPrinter(console: console, configuration: room.configuration, json: json, pointers: pointers,
                                   offsetSeconds: TimeZone.current.secondsFromGMT())
        let records = room.wire
        let printed = Latch<Void>()
        Task {
            for await record in records {
                if let ended = printer.print(record) { end.set(.ended(ended)) }
            }
            printed.set(())
        }
        let trap = SignalTrap([SIGINT, SIGTERM]) { end.set(.signal($0)) }
        defer { trap.cancel() }
        let joined = blocking { () async -> SessionError? in
            do throws(SessionError) {
                try await room.join(timeout: common.timeout)
                return nil
            } catch {
                return error
            }
        }
        if let joined {
            room.leave()
            printed.wait()
            return fail(joined)
        }
        let reason = end.wait()
        room.leave()
        printed.wait()
        switch reason {
        case .signal(let number): return 128 + number
        case .ended(let error): return fail(error)
        }
    }
}

/// Why `watch` stopped.
enum WatchEnd: Sendable {
    case signal(Int32)
    case ended(SessionError)
}

/// Prints what a watching room hears: events, presence and (with
/// `pointers`) pointer batches on stdout (readable lines or the messages as
/// received), connection changes on stderr.
final class WatchPrinter: Sendable {
    private let console: Console
    private let configuration: SessionConfiguration
    private let json: Bool
    private let pointers: Bool
    private let lines: EventLines
    /// The names of the pointers shown, for the line of one that goes after
    /// its owner left (the session has forgotten it by then).
    private let pointerNames = Mutex<[String: String]>([:])

    init(console: Console, configuration: SessionConfiguration, json: Bool, pointers: Bool = false, offsetSeconds: Int) {
        self.console = console
        self.configuration = configuration
        self.json = json
        self.pointers = pointers
        lines = EventLines(offsetSeconds: offsetSeconds)
    }

    /// Prints `record`; returns the error when it is the session's end.
    func print(_ record: WireRecord) -> SessionError? {
        switch record {
        case .joined(let welcome, let outcome): joined(welcome, outcome: outcome)
        case .event(let event, let text): console.out(json ? text : lines.event(event))
        case .tick(let tick, let text): console.out(json ? text : lines.tick(tick))
        case .missed(let range):
            if !json { console.out(lines.missed(range, atMilliseconds: SystemTime.wallMilliseconds())) }
        case .delivery(let mode, let tickMs): delivery(mode, tickMs: tickMs)
        case .presence(let change, let text):
            console.out(json ? text : lines.presence(change, atMilliseconds: SystemTime.wallMilliseconds()))
        case .resync(let seq, let state, let text):
            console.out(json ? text : lines.resync(seq: seq, state: state, atMilliseconds: SystemTime.wallMilliseconds()))
        case .pointers(let update, let text): pointerUpdate(update, text: text)
        case .error(let error): console.err("happyclient: the server says \(error.code.rawValue): \(error.message)")
        case .status(let state): return status(state)
        }
        return nil
    }

    private func joined(_ welcome: WelcomeMessage, outcome: ResumeOutcome) {
        let url = configuration.displayURL
        switch outcome {
        case .fresh:
            let ticks = welcome.delivery == .tick ? "; \(EventLines.delivery(.tick, tickMs: welcome.tickMs))" : ""
            console.err("happyclient: watching room \(welcome.room) at \(url) (seq \(welcome.seq), "
                        + "\(welcome.presenceCount) \(welcome.presenceCount == 1 ? "person" : "people") here\(ticks))")
            if welcome.isNewRoom(observing: configuration.observe) {
                console.err("happyclient: \(HistoryNotes.newRoom(welcome.room))")
            }
        case .resumed(let missed):
            console.err("happyclient: reconnected; resumed at seq \(welcome.seq - missed)"
                        + (missed == 0 ? ", nothing missed" : ", \(missed) missed event\(missed == 1 ? " follows" : "s follow")"))
        case .gap(let lastSeen, let seq):
            console.err("happyclient: reconnected; events #\(lastSeen + 1)–#\(seq) are no longer available "
                        + "(the state is current)")
        case .newEpoch:
            console.err("happyclient: reconnected; the room's history was reset (epoch \(welcome.epoch), seq \(welcome.seq))")
        }
    }

    /// `--json` prints the message as the server encodes it (the session passes on no text for it).
    private func delivery(_ mode: DeliveryMode, tickMs: Int) {
        if json {
            console.out(String(decoding: ServerMessageEncoder.delivery(mode, tickMs: tickMs), as: UTF8.self))
        } else {
            console.out(lines.delivery(mode, tickMs: tickMs, atMilliseconds: SystemTime.wallMilliseconds()))
        }
    }

    /// Batches as received with `--json`; else one line per pointer that
    /// moved or went, and at the start those already shown. Pointers dropped
    /// with a connection are not printed: the next welcome lists them again.
    private func pointerUpdate(_ update: PointerUpdate, text: String?) {
        guard pointers else { return }
        if json {
            if update.cause == .batch, let text { console.out(text) }
            return
        }
        guard update.cause == .batch || update.cause == .welcome else { return }
        let now = SystemTime.wallMilliseconds()
        for text in pointerLines(update, atMilliseconds: now) { console.out(text) }
    }

    func pointerLines(_ update: PointerUpdate, atMilliseconds now: Int64) -> [String] {
        pointerNames.withLock { names in
            var output: [String] = []
            for entry in update.moved {
                names[entry.id] = entry.name
                output.append(lines.pointer(entry, atMilliseconds: now))
            }
            if update.cause == .batch {
                for id in update.gone {
                    output.append(lines.pointerGone(id: id, name: names.removeValue(forKey: id), atMilliseconds: now))
                }
            }
            return output
        }
    }

    private func status(_ state: ConnectionState) -> SessionError? {
        switch state {
        case .waiting(let delay, let reason):
            console.err("happyclient: not connected (\(reason)); retrying in \(Describe.number(delay)) s")
        case .connecting(let attempt) where attempt > 0:
            console.err("happyclient: reconnecting to \(configuration.displayURL) (attempt \(attempt + 1))")
        case .ended(let error):
            return error
        default:
            break
        }
        return nil
    }
}
