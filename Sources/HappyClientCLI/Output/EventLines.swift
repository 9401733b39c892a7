import Foundation
import HappyClientKit
import HappyCore

/// The readable lines of `watch`: one per event, join, leave, resync, and
/// pointer that moved or went.
/// `offsetSeconds` is the local time zone's offset from UTC.
struct EventLines {
    var offsetSeconds: Int

    /// `12:04:05 #131 alice  dragon (10, 10) → (20, 10)  forwardButtonClicked:`: what changed in
    /// plain words, then the delegate name. The page's event log writes the same line
    /// (web/js/describe.js, `eventLine`).
    func event(_ event: EventMessage) -> String {
        let time = TimeOfDay.format(milliseconds: event.time, offsetSeconds: offsetSeconds)
        return "\(time) #\(event.seq) \(Self.sender(of: event))  \(Self.summary(of: event))  \(event.name)"
    }

    /// Who caused an event: its sender's name, or for a voted one (it has no
    /// sender) `the crowd (41 forward, 19 back)`.
    static func sender(of event: EventMessage) -> String {
        guard let votes = event.votes else { return event.sender.name }
        return "the crowd (\(votes.forward) forward, \(votes.back) back)"
    }

    /// `12:04:07 bob (c8) joined`
    func presence(_ change: PresenceChange, atMilliseconds now: Int64) -> String {
        let time = TimeOfDay.format(milliseconds: now, offsetSeconds: offsetSeconds)
        switch change {
        case .joined(let who): return "\(time) \(Describe.participant(who)) joined"
        case .left(let who): return "\(time) \(Describe.participant(who)) left"
        case .batch(let batch): return "\(time) \(Self.summary(of: batch))"
        }
    }

    /// `12:04:05 #131–190 alice and 36 others: 41 forward, 19 back`: one line for a whole tick
    /// (the page's log writes the same, web/js/describe.js `tickLine`).
    func tick(_ tick: TickMessage) -> String {
        let time = TimeOfDay.format(milliseconds: tick.time, offsetSeconds: offsetSeconds)
        var parts: [String] = []
        if tick.eventCount > 0 {
            let range = tick.from == tick.seq ? "#\(tick.seq)" : "#\(tick.from)–\(tick.seq)"
            parts.append("\(range) \(Self.who(tick.senders, count: tick.senderCount)): \(Self.counts(of: tick))")
        }
        if let batch = tick.presence, !batch.isEmpty { parts.append(Self.summary(of: batch)) }
        return "\(time) " + parts.joined(separator: "; ")
    }

    /// `alice`, `alice and bob`, `alice and 36 others`; without names `37 people`, or `the crowd`
    /// when not even a count came.
    static func who(_ senders: [Participant], count: Int) -> String {
        guard let first = senders.first else {
            return count == 1 ? "1 person" : count > 1 ? "\(count) people" : "the crowd"
        }
        if count <= 1 { return first.name }
        if count == 2 && senders.count > 1 { return "\(first.name) and \(senders[1].name)" }
        return "\(first.name) and \(count - 1) other\(count == 2 ? "" : "s")"
    }

    /// `41 forward, 19 back, 3 happiness`: the votes when the tick has them, else its events by kind.
    static func counts(of tick: TickMessage) -> String {
        var parts: [String] = []
        if let votes = tick.votes { parts = ["\(votes.forward) forward", "\(votes.back) back"] }
        for (name, count) in tick.names {
            let event = EventName(rawValue: name)
            if tick.votes != nil && (event == .forwardButtonClicked || event == .backButtonClicked) { continue }
            parts.append("\(count) \(event?.spec.word ?? name)")
        }
        return parts.joined(separator: ", ")
    }

    /// `+120 joined, 33 left (5234 here)`.
    static func summary(of batch: PresenceBatch) -> String {
        "+\(batch.joinedCount) joined, \(batch.leftCount) left (\(batch.count) here)"
    }

    /// `12:04:05 delivery: one tick every 50 ms` or `12:04:05 delivery: one message per event`.
    func delivery(_ mode: DeliveryMode, tickMs: Int, atMilliseconds now: Int64) -> String {
        "\(TimeOfDay.format(milliseconds: now, offsetSeconds: offsetSeconds)) \(Self.delivery(mode, tickMs: tickMs))"
    }

    static func delivery(_ mode: DeliveryMode, tickMs: Int) -> String {
        switch mode {
        case .tick: return "delivery: one tick every \(tickMs) ms"
        case .each: return "delivery: one message per event"
        }
    }

    /// `12:04:05 events #41–44 did not arrive (the state is current)`: a tick began past the next seq.
    func missed(_ range: ClosedRange<UInt64>, atMilliseconds now: Int64) -> String {
        let time = TimeOfDay.format(milliseconds: now, offsetSeconds: offsetSeconds)
        let events = range.count == 1 ? "event #\(range.lowerBound)" : "events #\(range.lowerBound)–\(range.upperBound)"
        return "\(time) \(events) did not arrive (the state is current)"
    }

    /// `12:04:09 resync #180: happiness 50, …` (events before it were dropped by the server).
    func resync(seq: UInt64, state: Scene, atMilliseconds now: Int64) -> String {
        let time = TimeOfDay.format(milliseconds: now, offsetSeconds: offsetSeconds)
        return "\(time) resync #\(seq) (events before it were skipped): \(Describe.summary(state))"
    }

    /// `12:04:05 pointer alice (c7)  face (0.42, 0.61) drag`
    func pointer(_ entry: PointerEntry, atMilliseconds now: Int64) -> String {
        let time = TimeOfDay.format(milliseconds: now, offsetSeconds: offsetSeconds)
        let participant = Participant(id: entry.id, name: entry.name)
        return "\(time) pointer \(Describe.participant(participant))  \(Self.place(entry.position))"
    }

    /// `12:04:06 pointer alice (c7)  gone` (the id alone when the name is unknown).
    func pointerGone(id: String, name: String?, atMilliseconds now: Int64) -> String {
        let time = TimeOfDay.format(milliseconds: now, offsetSeconds: offsetSeconds)
        let who = name.map { Describe.participant(Participant(id: id, name: $0)) } ?? id
        return "\(time) pointer \(who)  gone"
    }

    /// `face (0.42, 0.61) drag`: the view, the spot in it, the activity.
    static func place(_ position: PointerPosition) -> String {
        let x = String(format: "%.2f", position.x), y = String(format: "%.2f", position.y)
        return "\(position.view.rawValue) (\(x), \(y)) \(position.activity.rawValue)"
    }

    /// What an event changed, as its entry in the event table says (`EventSummary`):
    /// `happiness 50 → 80`, `heart fill #ff0000 → #00ff00, width 1 → 3`, `dragon (10, 10) → (20, 10)`,
    /// `dragon (10, 10), blocked at the edge`, `dragon hidden`, `room reset: happiness 50, …`.
    static func summary(of event: EventMessage) -> String {
        let scene = event.state
        let changes = event.changes.filter { $0.path != ScenePath.faceSmile.rawValue }
        func change(_ change: (path: String, from: JSONValue, to: JSONValue)) -> String {
            "\(ScenePath(rawValue: change.path)?.word ?? change.path) \(text(change.from)) → \(text(change.to))"
        }
        switch EventName(rawValue: event.name)?.spec.summary {
        case .dragonPosition?:
            let to = Describe.position(scene.dragon)
            guard !changes.isEmpty else { return "dragon \(to), blocked at the edge" }
            func from(_ path: ScenePath, _ now: Double) -> String {
                text(changes.first { $0.path == path.rawValue }?.from ?? .number(now))
            }
            return "dragon (\(from(.dragonX, scene.dragon.x)), \(from(.dragonY, scene.dragon.y))) → \(to)"
        case .dragonVisibility?:
            return "dragon \(Describe.visibility(scene.dragon))"
        case .roomReset?:
            return "room reset: \(Describe.summary(scene))"
        case .heartStyle?:
            // The heart named once: `heart fill … → …, width … → …`.
            return "heart " + changes.map(change).joined(separator: ", ")
        case .value?, nil:
            guard !changes.isEmpty else { return "no change" }
            return changes.map(change).joined(separator: ", ")
        }
    }

    /// A value as the line shows it: numbers as `Describe.number`, strings bare.
    static func text(_ value: JSONValue) -> String {
        if let number = value.doubleValue { return Describe.number(number) }
        if let string = value.stringValue { return string }
        var writer = JSONWriter(capacity: 16)
        writer.value(value)
        return writer.text
    }
}
