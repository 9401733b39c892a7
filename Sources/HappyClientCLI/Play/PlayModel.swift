import Foundation
import HappyClientKit
import HappyCore
import HappyRender

/// What the `play` screen shows besides the session's scene: the dragon's
/// status label, the last answer, the connection, the others' pointers and
/// when each last moved. Filled in from the session's thread, read by the
/// terminal loop; it wakes the loop on changes.
final class PlayModel: HappySessionDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private let wake: @Sendable () -> Void
    private let status: DragonStatus
    private var statusLabelText: String
    private var drawnStatusText: String
    private var lastAnswerText: String?
    private var connectionText = "connecting…"
    private var endedError: SessionError?
    private var pointerTable: [String: PointerEntry] = [:]
    private var pointerMovedAt: [String: Double] = [:]
    private var crowdTally = CrowdTally()

    init(status: DragonStatus, wake: @escaping @Sendable () -> Void) {
        self.status = status
        self.wake = wake
        statusLabelText = status.initial
        drawnStatusText = status.initial
    }

    /// The status label with the sender: `alice: forward, (x,y) = (20, 10)`.
    var statusLabel: String { locked { statusLabelText } }
    /// The label as the panel draws it, without the sender.
    var drawnStatus: String { locked { drawnStatusText } }
    var lastAnswer: String? { locked { lastAnswerText } }
    var connection: String { locked { connectionText } }
    /// Set when the session ended by itself (refused, or dropped for good).
    var ended: SessionError? { locked { endedError } }
    /// The others' visible pointers, the least recently moved first (so
    /// that the latest is drawn on top), and when each last moved
    /// (monotonic seconds; not known for those listed by the welcome).
    var pointers: (entries: [PointerEntry], movedAt: [String: Double]) {
        locked {
            let entries = pointerTable.values.sorted {
                (pointerMovedAt[$0.id] ?? -.infinity, $0.id) < (pointerMovedAt[$1.id] ?? -.infinity, $1.id)
            }
            return (entries, pointerMovedAt)
        }
    }

    /// The crowd line (`here (5234) · last second: 41 forward, 19 back · recent: …`) while the
    /// room is a crowd (tick delivery, or a batch of joins or a voted event lately); else nil.
    func crowdLine(delivery: DeliveryMode, here count: Int, now: Double = SystemTime.monotonicSeconds()) -> String? {
        locked { crowdTally.isCrowd(at: now, delivery: delivery) ? crowdTally.line(at: now, here: count) : nil }
    }

    /// Records the answer to a key's intent.
    func answered(_ action: Action, _ result: Result<IntentOutcome, SessionError>) {
        let text: String
        switch result {
        case .success(let outcome): text = IntentReport.line(for: action, outcome)
        case .failure(.refused(let error)): text = "refused: \(error.code.rawValue): \(error.message)"
        case .failure(let error): text = "\(error)"
        }
        update { lastAnswerText = text }
    }

    /// Records a note for the answer line (throttled keys).
    func note(_ text: String) {
        update { lastAnswerText = text }
    }

    // MARK: HappySessionDelegate

    func session(_ session: HappySession, didJoin welcome: WelcomeMessage, outcome: ResumeOutcome) {
        update {
            if case .newEpoch = outcome { setLabel(status.initial, drawn: status.initial) }
        }
    }

    func session(_ session: HappySession, didReceive event: EventMessage, text: String) {
        let now = SystemTime.monotonicSeconds()
        update {
            crowdTally.add(event, at: now)
            guard let label = Self.label(after: event, status: status) else { return }
            setLabel(label.shown, drawn: label.drawn)
        }
    }

    /// The status label after `event`, nil when it leaves the label as it
    /// was: as shown under the picture, with the sender (`alice: forward,
    /// (x,y) = (20, 10)`; a reset has none), and as the panel draws it.
    static func label(after event: EventMessage, status: DragonStatus) -> (shown: String, drawn: String)? {
        guard let name = EventName(rawValue: event.name),
              let label = status.after(name, dragon: event.state.dragon) else { return nil }
        let who = event.votes == nil ? event.sender.name : "the crowd"
        return (name == .didReset ? label : "\(who): \(label)", label)
    }

    func session(_ session: HappySession, didReceive tick: TickMessage, text: String) {
        let now = SystemTime.monotonicSeconds()
        update {
            crowdTally.add(tick, at: now)
            guard let label = Self.label(after: tick, status: status) else { return }
            setLabel(label.shown, drawn: label.drawn)
        }
    }

    /// The status label after a tick, nil when it has no dragon event (see `TickLabel`).
    static func label(after tick: TickMessage, status: DragonStatus) -> (shown: String, drawn: String)? {
        guard let name = TickLabel.event(of: tick), let label = status.after(name, dragon: tick.state.dragon) else { return nil }
        return (name == .didReset ? label : "\(TickLabel.who(tick)): \(label)", label)
    }

    func session(_ session: HappySession, presence change: PresenceChange, text: String) {
        let now = SystemTime.monotonicSeconds()
        update {
            if case .batch = change { crowdTally.sawCrowd(at: now) }
        }
    }

    func session(_ session: HappySession, didChangeDelivery mode: DeliveryMode, tickMs: Int) {
        update {}
    }

    func session(_ session: HappySession, didResync seq: UInt64, state: Scene, text: String) {
        update {}
    }

    func session(_ session: HappySession, didUpdatePointers change: PointerUpdate, text: String?) {
        let now = SystemTime.monotonicSeconds()
        update {
            if change.cause == .batch {
                for entry in change.moved where pointerTable[entry.id]?.position != entry.position {
                    pointerMovedAt[entry.id] = now
                }
            }
            pointerTable = change.pointers
            pointerMovedAt = pointerMovedAt.filter { pointerTable[$0.key] != nil }
        }
    }

    func session(_ session: HappySession, didChange notice: ConnectionState) {
        // The session's state now: the notice of the first connection
        // attempt can arrive after that of its welcome.
        let state = session.snapshot.connectionState ?? notice
        update {
            switch state {
            case .connecting(let attempt): connectionText = attempt == 0 ? "connecting…" : "reconnecting (attempt \(attempt + 1))…"
            case .connected: connectionText = "connected"
            case .waiting(let delay, let reason): connectionText = "retrying in \(Describe.number(delay)) s (\(reason))"
            case .suspended: connectionText = "suspended"
            case .ended(let error):
                connectionText = "ended"
                endedError = error
            }
        }
    }

    // MARK: helpers

    private func setLabel(_ label: String, drawn: String) {
        statusLabelText = label
        drawnStatusText = drawn
    }

    private func update(_ change: () -> Void) {
        lock.lock()
        change()
        lock.unlock()
        wake()
    }

    private func locked<T>(_ read: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return read()
    }
}
