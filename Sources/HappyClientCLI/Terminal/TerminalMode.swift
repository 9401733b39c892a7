import Foundation

/// The terminal as `play` uses it: raw keyboard input (no echo, no line
/// buffering; Ctrl-C still raises SIGINT), the alternate screen and a hidden
/// cursor. `restore()` puts everything back and is safe to call twice.
final class TerminalMode {
    private let input: Int32
    private let output: Int32
    private var original: termios?

    init(input: Int32 = 0, output: Int32 = 1) {
        self.input = input
        self.output = output
    }

    /// Both ends are terminals.
    static func isInteractive(input: Int32 = 0, output: Int32 = 1) -> Bool {
        isatty(input) == 1 && isatty(output) == 1
    }

    /// Switches to raw input and the alternate screen.
    func enter() throws(TerminalError) {
        var settings = termios()
        guard tcgetattr(input, &settings) == 0 else { throw TerminalError("cannot read the terminal settings") }
        original = settings
        settings.c_lflag &= ~tcflag_t(ICANON | ECHO | IEXTEN)
        settings.c_iflag &= ~tcflag_t(IXON | ICRNL)
        withUnsafeMutableBytes(of: &settings.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(input, TCSANOW, &settings) == 0 else { throw TerminalError("cannot switch the terminal to raw mode") }
        FileDescriptor.writeAll(output, ANSI.enterAlternateScreen + ANSI.hideCursor + ANSI.clearScreen)
    }

    /// Leaves the alternate screen, shows the cursor, restores the settings.
    func restore() {
        guard var settings = original else { return }
        original = nil
        FileDescriptor.writeAll(output, ANSI.reset + ANSI.showCursor + ANSI.leaveAlternateScreen)
        tcsetattr(input, TCSADRAIN, &settings)
    }

    /// The window's size in character cells.
    func size() -> (columns: Int, rows: Int) {
        var size = winsize()
        guard ioctl(output, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return (80, 24) }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    deinit { restore() }
}

/// Why the terminal could not be set up.
struct TerminalError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The escape sequences `play` writes.
enum ANSI {
    static let escape = "\u{1B}["
    static let enterAlternateScreen = escape + "?1049h"
    static let leaveAlternateScreen = escape + "?1049l"
    static let hideCursor = escape + "?25l"
    static let showCursor = escape + "?25h"
    static let clearScreen = escape + "2J"
    static let clearToEndOfLine = escape + "K"
    static let reset = escape + "0m"
    static let bold = escape + "1m"
    static let inverse = escape + "7m"

    /// Moves the cursor to `row`, `column` (both from 1).
    static func moveTo(row: Int, column: Int = 1) -> String {
        escape + "\(row);\(column)H"
    }
}
