import HappyCore

/// The rows of one `play` screen, from the layout, the picture's lines and
/// the texts. Pure, so it can be checked without a terminal.
struct PlayScreen {
    struct Texts {
        var title: String
        var statusLabel: String
        var values: String
        var presence: String
        var steering: String
        var keys: String
    }

    let layout: PlayLayout

    /// Exactly `layout.rows` rows, each at most `layout.columns` cells wide.
    func rows(picture: [String], texts: Texts) -> [String] {
        let width = layout.columns
        var rows = [ANSI.inverse + Self.fit(texts.title, width: width, pad: true) + ANSI.reset]
        if layout.tooSmall {
            rows.append(Self.fit("too small (\(PlayLayout.minimumColumns)×\(PlayLayout.minimumRows))",
                                 width: width))
            rows.append(Self.fit("q quit", width: width))
            return Array(rows.prefix(layout.rows))
        }
        for index in 0..<layout.pictureRows {
            rows.append(index < picture.count ? picture[index] : "")
        }
        rows.append(ANSI.bold + Self.fit(texts.statusLabel, width: width) + ANSI.reset)
        rows.append(Self.fit(texts.values, width: width))
        rows.append(Self.fit(texts.presence, width: width))
        rows.append(Self.fit(texts.steering, width: width))
        rows.append(Self.fit(texts.keys, width: width))
        return rows
    }

    /// What the keys do while a replay shows the past.
    static let replayKeys = "any key: live now  q quit"

    /// The text rows' contents for a moment of the game; during a replay,
    /// `replay` is its line (`replay seq 12 of 40 at 4×`), shown in the title.
    static func texts(room: String, url: String, you: Participant?, connection: String, seq: UInt64,
                      scene: Scene?, statusLabel: String, lastAnswer: String?,
                      presence: [Participant], presenceCount: Int, steering: String, replay: String? = nil) -> Texts {
        let who = you.map { " · \($0.name)" } ?? ""
        let title = replay.map { " Happy · room \(room)\(who) · \($0) · \(connection)" }
            ?? " Happy · room \(room)\(who) · \(url) · \(connection) · seq \(seq)"
        var values = "waiting for the room…"
        if let scene {
            values = "happiness \(scene.face.happiness) · scale \(Describe.number(scene.face.scale)) · "
                + "heart \(Describe.number(scene.heart.rate)) · dragon \(Describe.position(scene.dragon)) "
                + Describe.visibility(scene.dragon)
        }
        if let lastAnswer { values += "   last: \(lastAnswer)" }
        let names = presence.map { $0 == you ? "\($0.name) (you)" : $0.name }
        let more = presenceCount > presence.count ? ", …" : ""
        return Texts(title: title, statusLabel: statusLabel, values: values,
                     presence: "here (\(presenceCount)): " + names.joined(separator: ", ") + more,
                     steering: steering, keys: replay == nil ? PlayKeys.help : replayKeys)
    }

    /// Cut to `width` characters (an ellipsis marks the cut), optionally padded.
    static func fit(_ text: String, width: Int, pad: Bool = false) -> String {
        guard width > 0 else { return "" }
        if text.count > width { return String(text.prefix(width - 1)) + "…" }
        return pad ? text + String(repeating: " ", count: width - text.count) : text
    }
}
