import HappyClientKit
import HappyCore

/// What `state` prints, from a welcome: a readable summary or one JSON
/// object. Presence lists the other clients (not this one).
struct StateReport {
    var welcome: WelcomeMessage
    var json: JSONValue
    /// Whether this client joined as an observer, and so is not in the presence it reports.
    var observing = false

    private var others: [Participant] { welcome.presence.filter { $0 != welcome.you } }

    private var othersCount: Int { observing ? welcome.presenceCount : max(0, welcome.presenceCount - 1) }

    /// The readable summary, one aspect per line.
    var text: String {
        let count = othersCount
        let counted = observing ? "\(count) \(count == 1 ? "person" : "people")" : "\(count) other\(count == 1 ? "" : "s")"
        let here = count == 0
            ? (observing ? "nobody" : "nobody else")
            : "\(counted): " + others.map(Describe.participant).joined(separator: ", ")
                + (others.count < count ? ", …" : "")
        return """
            room     \(welcome.room)   seq \(welcome.seq)   epoch \(welcome.epoch)
            \(Self.sceneLines(welcome.state))
            here     \(here)
            """
    }

    /// The face, heart and dragon lines.
    static func sceneLines(_ scene: Scene) -> String {
        """
        face     happiness \(scene.face.happiness) (smile \(Describe.number(scene.face.smile)))   scale \(Describe.number(scene.face.scale))
        heart    rate \(Describe.number(scene.heart.rate))   fill \(scene.heart.fillColor.hex)   stroke \(scene.heart.strokeColor.hex)   width \(Describe.number(scene.heart.lineWidth))
        dragon   \(Describe.position(scene.dragon))   \(Describe.visibility(scene.dragon))
        """
    }

    /// What `state --seq N` prints: the room as it was right after event N,
    /// with the dragon's status label then.
    static func past(_ past: PastStateAnswer) -> String {
        """
        room     \(past.room)   seq \(past.seq)   epoch \(past.epoch)
        \(sceneLines(past.state))
        status   \(past.dragonStatus)
        """
    }

    /// `{"room","epoch","seq","state","presence","presenceCount"}`, the
    /// state exactly as the server sent it.
    var jsonText: String {
        var w = JSONWriter(capacity: 512)
        w.beginObject()
        w.key("room"); w.string(welcome.room)
        w.key("epoch"); w.string(welcome.epoch)
        w.key("seq"); w.uint(welcome.seq)
        w.key("state"); w.value(json["state"] ?? .null)
        w.key("presence")
        w.beginArray()
        for participant in others {
            w.beginObject()
            w.key("id"); w.string(participant.id)
            w.key("name"); w.string(participant.name)
            w.endObject()
        }
        w.endArray()
        w.key("presenceCount"); w.int(othersCount)
        w.endObject()
        return w.text
    }
}

extension WelcomeMessage {
    /// No events yet and nobody but this client: a new room, or a mistyped
    /// name. An observer is not in `presenceCount`.
    func isNewRoom(observing: Bool) -> Bool { seq == 0 && presenceCount <= (observing ? 0 : 1) }
}
