/// Turns pixels into terminal text, two pixels per character cell: the
/// upper half block `▀` in the top pixel's colour over the bottom pixel's
/// colour (24-bit or the 16 ANSI colours), or plain ASCII shading.
/// Transparent pixels leave the terminal's default background. Marks put a
/// character of their own in a cell, over the pixels.
struct CellEncoder {
    let mode: ColorMode

    /// One string per cell row (`(grid.height + 1) / 2` rows); each ends with
    /// the attributes reset. Marks outside the grid are left out; of two in
    /// one cell the last wins.
    func lines(_ grid: PixelGrid, marks: [CellMark] = []) -> [String] {
        var marksByRow: [Int: [Int: CellMark]] = [:]
        for mark in marks where (0..<grid.width).contains(mark.column) && mark.row >= 0 && mark.row * 2 < grid.height {
            marksByRow[mark.row, default: [:]][mark.column] = mark
        }
        return stride(from: 0, to: grid.height, by: 2).map { top in
            line(grid, top: top, bottom: top + 1 < grid.height ? top + 1 : nil, marks: marksByRow[top / 2] ?? [:])
        }
    }

    private func line(_ grid: PixelGrid, top: Int, bottom: Int?, marks: [Int: CellMark]) -> String {
        var text = ""
        text.reserveCapacity(grid.width * (mode == .truecolor ? 24 : 4))
        var pen = Pen()
        for x in 0..<grid.width {
            if let mark = marks[x] {
                if mode == .none {
                    text.append(mark.character)
                } else {
                    // Bold dark text on the mark's colour; the pen starts afresh after it.
                    text += ANSI.bold + code(mark.color, background: true) + code(.black, background: false)
                    text.append(mark.character)
                    text += ANSI.reset
                    pen = Pen()
                }
                continue
            }
            let upper = grid[x, top]
            let lower = bottom.flatMap { grid[x, $0] }
            if mode == .none {
                text.append(Self.shade(upper, lower))
                continue
            }
            switch (upper.map { code($0, background: false) }, lower.map { code($0, background: false) }) {
            case (nil, nil):
                pen.set(background: Self.defaultBackground, into: &text)
                text.append(" ")
            case (let up?, let down?) where up == down:
                pen.set(background: code(upper!, background: true), into: &text)
                text.append(" ")
            case (let up?, _):
                pen.set(foreground: up, into: &text)
                pen.set(background: lower.map { code($0, background: true) } ?? Self.defaultBackground, into: &text)
                text.append("▀")
            case (nil, let down?):
                pen.set(foreground: down, into: &text)
                pen.set(background: Self.defaultBackground, into: &text)
                text.append("▄")
            }
        }
        if mode != .none { text += ANSI.reset }
        return text
    }

    /// The colours last set on a line, so that runs of a colour cost one escape
    /// (nil: not known, as at the start or after a reset).
    private struct Pen {
        var foreground: String?
        var background: String?

        mutating func set(foreground code: String, into text: inout String) {
            if foreground != code { text += code; foreground = code }
        }

        mutating func set(background code: String, into text: inout String) {
            if background != code { text += code; background = code }
        }
    }

    static let defaultBackground = ANSI.escape + "49m"

    private func code(_ color: RGB, background: Bool) -> String {
        switch mode {
        case .truecolor:
            return ANSI.escape + (background ? "48" : "38") + ";2;\(color.red);\(color.green);\(color.blue)m"
        case .ansi16:
            let index = Self.nearestANSI(color)
            let base = (background ? 40 : 30) + (index < 8 ? index : 60 + index - 8)
            return ANSI.escape + "\(base)m"
        case .none:
            return ""
        }
    }

    /// The 16 ANSI colours as xterm shows them.
    static let palette: [RGB] = [
        RGB(red: 0, green: 0, blue: 0), RGB(red: 205, green: 0, blue: 0), RGB(red: 0, green: 205, blue: 0),
        RGB(red: 205, green: 205, blue: 0), RGB(red: 0, green: 0, blue: 238), RGB(red: 205, green: 0, blue: 205),
        RGB(red: 0, green: 205, blue: 205), RGB(red: 229, green: 229, blue: 229), RGB(red: 127, green: 127, blue: 127),
        RGB(red: 255, green: 0, blue: 0), RGB(red: 0, green: 255, blue: 0), RGB(red: 255, green: 255, blue: 0),
        RGB(red: 92, green: 92, blue: 255), RGB(red: 255, green: 0, blue: 255), RGB(red: 0, green: 255, blue: 255),
        RGB(red: 255, green: 255, blue: 255),
    ]

    /// The index (0...15) of the palette colour closest to `color`.
    static func nearestANSI(_ color: RGB) -> Int {
        var best = 0
        var bestDistance = Int.max
        for (index, candidate) in palette.enumerated() {
            let dr = Int(color.red) - Int(candidate.red)
            let dg = Int(color.green) - Int(candidate.green)
            let db = Int(color.blue) - Int(candidate.blue)
            let distance = 3 * dr * dr + 4 * dg * dg + 2 * db * db
            if distance < bestDistance { best = index; bestDistance = distance }
        }
        return best
    }

    /// Dark to light: dense to empty, as ink on paper.
    static let ramp = Array("@%#*+=-:. ")

    /// The ASCII character for a cell; transparent halves count as empty.
    static func shade(_ upper: RGB?, _ lower: RGB?) -> Character {
        guard upper != nil || lower != nil else { return " " }
        let values = [upper, lower].compactMap { $0?.luminance }
        let luminance = values.reduce(0, +) / Double(values.count)
        return ramp[min(ramp.count - 1, Int(luminance * Double(ramp.count)))]
    }
}

/// A character drawn in one cell over a picture (a pointer's marker), on a
/// background of `color`. `column` and `row` count cells from the top left.
struct CellMark: Equatable {
    var column: Int
    var row: Int
    var character: Character
    var color: RGB
}
