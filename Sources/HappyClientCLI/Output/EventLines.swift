import Foundation
import HappyClientKit
import HappyCore

/// The readable lines of `watch`: one per event, join, leave, resync, and
/// pointer that moved or went.
/// `offsetSeconds` is the local time zone's offset from UTC.
struct EventLines {
    var offsetSeconds: Int

    /// `12:04:05 #131 alice  forwardButtonClicked:  dragon (20, 10)`
    func event(_ event: EventMessage) -> String {
        let time = TimeOfDay.format(milliseconds: event.time, offsetSeconds: offsetSeconds)
        return "\(time) #\(event.seq) \(event.sender.name)  \(event.name)  \(Self.summary(of: event))"
    }

    /// `12:04:07 bob (c8) joined`
    func presence(_ change: PresenceChange, atMilliseconds now: Int64) -> String {
        let time = TimeOfDay.format(milliseconds: now, offsetSeconds: offsetSeconds)
        switch change {
        case .joined(let who): return "\(time) \(Describe.participant(who)) joined"
        case .left(let who): return "\(time) \(Describe.participant(who)) left"
        }
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

    /// What an event changed, as its new values.
    static func summary(of event: EventMessage) -> String {
        let scene = event.state
        switch EventName(rawValue: event.name) {
        case .didChangeHappiness?: return "happiness \(scene.face.happiness)"
        case .didChangeScale?: return "scale \(Describe.number(scene.face.scale))"
        case .didChangeRate?: return "heart rate \(Describe.number(scene.heart.rate))"
        case .didChangeStyle?:
            let parts = event.changes.compactMap { change -> String? in
                switch change.path {
                case "heart.fillColor": return "fill \(scene.heart.fillColor.hex)"
                case "heart.strokeColor": return "stroke \(scene.heart.strokeColor.hex)"
                case "heart.lineWidth": return "width \(Describe.number(scene.heart.lineWidth))"
                default: return nil
                }
            }
            return "heart " + (parts.isEmpty ? Describe.style(scene.heart) : parts.joined(separator: " "))
        case .forwardButtonClicked?, .backButtonClicked?:
            return "dragon \(Describe.position(scene.dragon))" + (event.changes.isEmpty ? " blocked" : "")
        case .didChangeHidden?: return "dragon \(Describe.visibility(scene.dragon))"
        case .didReset?: return "reset: \(Describe.summary(scene))"
        case nil:
            return event.changes.map { "\($0.path) \(Self.text($0.to))" }.joined(separator: ", ")
        }
    }

    private static func text(_ value: JSONValue) -> String {
        var writer = JSONWriter(capacity: 16)
        writer.value(value)
        return writer.text
    }
}
