import HappyCore

/// The rows of one `play` screen, from the layout, the picture's lines and
/// the texts. Pure, so it can be checked without a terminal.
struct PlayScreen {
    struct Texts {
        var title: String
        /// The title without the server's URL, for a narrower terminal.
        var shortTitle: String
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
        if layout.tooSmall {
            return Array(Self.wrap(Self.tooSmall(columns: layout.columns, rows: layout.rows), width: width)
                .prefix(layout.rows))
        }
        let title = texts.title.count <= width ? texts.title : texts.shortTitle
        var rows = [ANSI.inverse + Self.fit(title, width: width, pad: true) + ANSI.reset]
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
    /// In a crowd room `crowd` takes the people line's place (`CrowdTally.line`).
    static func texts(room: String, url: String, you: Participant?, connection: String, seq: UInt64,
                      scene: Scene?, statusLabel: String, lastAnswer: String?,
                      presence: [Participant], presenceCount: Int, steering: String, replay: String? = nil,
                      crowd: String? = nil) -> Texts {
        let who = you.map { " · \($0.name)" } ?? ""
        let title = replay.map { " Happy · room \(room)\(who) · \($0) · \(connection)" }
            ?? " Happy · room \(room)\(who) · \(url) · \(connection) · seq \(seq)"
        let shortTitle = replay == nil ? " Happy · room \(room)\(who) · \(connection) · seq \(seq)" : title
        var values = "waiting for the room…"
        if let scene {
            values = "happiness \(scene.face.happiness) · scale \(Describe.number(scene.face.scale)) · "
                + "heart \(Describe.number(scene.heart.rate)) · dragon \(Describe.position(scene.dragon)) "
                + Describe.visibility(scene.dragon)
        }
        if let lastAnswer { values += "   last: \(lastAnswer)" }
        let names = presence.map { $0 == you ? "\($0.name) (you)" : $0.name }
        let more = presenceCount > presence.count ? ", …" : ""
        return Texts(title: title, shortTitle: shortTitle, statusLabel: statusLabel, values: values,
                     presence: crowd ?? "here (\(presenceCount)): " + names.joined(separator: ", ") + more,
                     steering: steering, keys: replay == nil ? PlayKeys.help : replayKeys)
    }

    /// What a terminal below the minimum shows instead of a squeezed view.
    static func tooSmall(columns: Int, rows: Int) -> String {
        "Too small: \(columns)×\(rows). This view needs at least "
            + "\(PlayLayout.minimumColumns)×\(PlayLayout.minimumRows) characters. "
            + "Enlarge the terminal, or press q to quit."
    }

    /// `text` in lines of at most `width` characters, broken between words
    /// (a word longer than a line is cut).
    static func wrap(_ text: String, width: Int) -> [String] {
        guard width > 0 else { return [] }
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            let word = String(word.prefix(width))
            if line.isEmpty {
                line = word
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = word
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    /// Cut to `width` characters (an ellipsis marks the cut), optionally padded.
    static func fit(_ text: String, width: Int, pad: Bool = false) -> String {
        guard width > 0 else { return "" }
        if text.count > width { return String(text.prefix(width - 1)) + "…" }
        return pad ? text + String(repeating: " ", count: width - text.count) : text
    }
}
