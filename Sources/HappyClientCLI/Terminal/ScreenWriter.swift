/// Writes whole screens to the terminal, sending only the rows that
/// changed since the last one, in a single write.
final class ScreenWriter {
    private let output: Int32
    private var shown: [String] = []

    init(output: Int32 = 1) {
        self.output = output
    }

    /// Forgets what is on screen: the next `show` clears and redraws all.
    func invalidate() {
        shown = []
    }

    /// Shows `rows` (already fitted to the width), top to bottom.
    func show(_ rows: [String]) {
        var text = ""
        if shown.isEmpty { text += ANSI.reset + ANSI.clearScreen }
        for (index, row) in rows.enumerated() where index >= shown.count || shown[index] != row {
            text += ANSI.moveTo(row: index + 1) + row + ANSI.reset + ANSI.clearToEndOfLine
        }
        if rows.count < shown.count {
            for index in rows.count..<shown.count { text += ANSI.moveTo(row: index + 1) + ANSI.clearToEndOfLine }
        }
        shown = rows
        guard !text.isEmpty else { return }
        FileDescriptor.writeAll(output, text)
    }
}
