import Foundation
import HappyClientKit
import HappyCore
import Synchronization

/// `watch`: prints the room's events and presence (and, asked to, the
/// others' pointers) as they come, across reconnects, until interrupted or refused.
extension CommandContext {
    func runWatch(json: Bool, pointers: Bool) -> Int32 {
        let end = Latch<WatchEnd>()
        let printer = WatchPrinter(console: console, json: json, pointers: pointers,
                                   offsetSeconds: TimeZone.current.secondsFromGMT(), onEnd: { end.set(.ended($0)) })
        let session = HappySession(configuration: common.sessionConfiguration(reconnects: true), loop: loop)
        session.delegate = printer
        let trap = SignalTrap([SIGINT, SIGTERM]) { end.set(.signal($0)) }
        defer { trap.cancel() }
        do {
            try session.waitForWelcome(timeout: common.timeout)
        } catch {
            session.delegate = nil
            session.stop(wait: 0)
            return fail(error)
        }
        let reason = end.wait()
        session.delegate = nil
        session.stop()
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

/// Prints what a watching session hears: events, presence and (with
/// `pointers`) pointer batches on stdout (readable lines or the messages as
/// received), connection changes on stderr.
final class WatchPrinter: HappySessionDelegate, Sendable {
    private let console: Console
    private let json: Bool
    private let pointers: Bool
    private let lines: EventLines
    /// Called when the session ends by itself (refused, or dropped for good).
    private let onEnd: @Sendable (SessionError) -> Void
    /// The names of the pointers shown, for the line of one that goes after
    /// its owner left (the session has forgotten it by then).
    private let pointerNames = Mutex<[String: String]>([:])

    init(console: Console, json: Bool, pointers: Bool = false, offsetSeconds: Int,
         onEnd: @escaping @Sendable (SessionError) -> Void) {
        self.console = console
        self.json = json
        self.pointers = pointers
        lines = EventLines(offsetSeconds: offsetSeconds)
        self.onEnd = onEnd
    }

    func session(_ session: HappySession, didJoin welcome: WelcomeMessage, outcome: ResumeOutcome) {
        let url = session.configuration.displayURL
        switch outcome {
        case .fresh:
            let ticks = welcome.delivery == .tick ? "; \(EventLines.delivery(.tick, tickMs: welcome.tickMs))" : ""
            console.err("happyclient: watching room \(welcome.room) at \(url) (seq \(welcome.seq), "
                        + "\(welcome.presenceCount) \(welcome.presenceCount == 1 ? "person" : "people") here\(ticks))")
            if welcome.isNewRoom(observing: session.configuration.observe) {
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

    func session(_ session: HappySession, didReceive event: EventMessage, text: String) {
        console.out(json ? text : lines.event(event))
    }

    /// A crowd room's tick: one line for all its events (and its joins and leaves).
    func session(_ session: HappySession, didReceive tick: TickMessage, text: String) {
        console.out(json ? text : lines.tick(tick))
    }

    func session(_ session: HappySession, missed range: ClosedRange<UInt64>, before tick: TickMessage) {
        guard !json else { return }
        console.out(lines.missed(range, atMilliseconds: SystemTime.wallMilliseconds()))
    }

    /// `--json` prints the message as the server encodes it (the session passes on no text for it).
    func session(_ session: HappySession, didChangeDelivery mode: DeliveryMode, tickMs: Int) {
        if json {
            console.out(String(decoding: ServerMessageEncoder.delivery(mode, tickMs: tickMs), as: UTF8.self))
        } else {
            console.out(lines.delivery(mode, tickMs: tickMs, atMilliseconds: SystemTime.wallMilliseconds()))
        }
    }

    func session(_ session: HappySession, presence change: PresenceChange, text: String) {
        console.out(json ? text : lines.presence(change, atMilliseconds: SystemTime.wallMilliseconds()))
    }

    func session(_ session: HappySession, didResync seq: UInt64, state: Scene, text: String) {
        console.out(json ? text : lines.resync(seq: seq, state: state, atMilliseconds: SystemTime.wallMilliseconds()))
    }

    /// Batches as received with `--json`; else one line per pointer that
    /// moved or went, and at the start those already shown. Pointers dropped
    /// with a connection are not printed: the next welcome lists them again.
    func session(_ session: HappySession, didUpdatePointers update: PointerUpdate, text: String?) {
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

    func session(_ session: HappySession, didReceiveError error: WireError) {
        console.err("happyclient: the server says \(error.code.rawValue): \(error.message)")
    }

    func session(_ session: HappySession, didChange state: ConnectionState) {
        switch state {
        case .waiting(let delay, let reason):
            console.err("happyclient: not connected (\(reason)); retrying in \(Describe.number(delay)) s")
        case .connecting(let attempt) where attempt > 0:
            console.err("happyclient: reconnecting to \(session.configuration.displayURL) (attempt \(attempt + 1))")
        case .ended(let error):
            onEnd(error)
        default:
            break
        }
    }
}
