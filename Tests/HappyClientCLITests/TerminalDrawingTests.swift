@testable import HappyClientCLI
import HappyCore
import HappyRender
import XCTest

/// Pixels to half blocks, keys from bytes, and the `play` screen's layout.
final class TerminalDrawingTests: XCTestCase {
    private let red = RGB(red: 255, green: 0, blue: 0)
    private let blue = RGB(red: 0, green: 0, blue: 255)

    private func grid(_ columns: [[RGB?]]) -> PixelGrid {
        var grid = PixelGrid(width: columns.count, height: columns.first?.count ?? 0)
        for (x, column) in columns.enumerated() {
            for (y, pixel) in column.enumerated() { grid[x, y] = pixel }
        }
        return grid
    }

    func testTruecolorHalfBlocks() {
        let lines = CellEncoder(mode: .truecolor).lines(grid([[red, blue], [red, red], [nil, nil], [nil, blue]]))
        XCTAssertEqual(lines, ["\u{1B}[38;2;255;0;0m\u{1B}[48;2;0;0;255m▀"
                               + "\u{1B}[48;2;255;0;0m "
                               + "\u{1B}[49m "
                               + "\u{1B}[38;2;0;0;255m▄"
                               + "\u{1B}[0m"])
    }

    func testColoursAreOnlyRepeatedWhenTheyChange() {
        let line = CellEncoder(mode: .truecolor).lines(grid(Array(repeating: [red, blue], count: 3)))[0]
        XCTAssertEqual(line, "\u{1B}[38;2;255;0;0m\u{1B}[48;2;0;0;255m▀▀▀\u{1B}[0m")
    }

    func testAnOddHeightLeavesTheLastBottomHalfTransparent() {
        let lines = CellEncoder(mode: .truecolor).lines(grid([[red, red, blue]]))
        XCTAssertEqual(lines.count, 2)
        XCTAssertEqual(lines[1], "\u{1B}[38;2;0;0;255m\u{1B}[49m▀\u{1B}[0m")
    }

    func testSixteenColours() {
        XCTAssertEqual(CellEncoder.nearestANSI(RGB(red: 250, green: 10, blue: 10)), 9)
        XCTAssertEqual(CellEncoder.nearestANSI(RGB(red: 0, green: 250, blue: 250)), 14)
        XCTAssertEqual(CellEncoder.nearestANSI(.white), 15)
        XCTAssertEqual(CellEncoder.nearestANSI(.black), 0)
        XCTAssertEqual(CellEncoder(mode: .ansi16).lines(grid([[red, blue]])), ["\u{1B}[91m\u{1B}[44m▀\u{1B}[0m"])
    }

    func testPlainShadingHasNoEscapes() {
        let lines = CellEncoder(mode: .none).lines(grid([[.black, .black], [.white, .white], [nil, nil], [.black, .white]]))
        XCTAssertEqual(lines, ["@  +"])
    }

    func testColourModeFromTheEnvironment() {
        XCTAssertEqual(ColorMode.detect(environment: ["COLORTERM": "truecolor"]), .truecolor)
        XCTAssertEqual(ColorMode.detect(environment: ["COLORTERM": "24bit", "TERM": "xterm"]), .truecolor)
        XCTAssertEqual(ColorMode.detect(environment: ["TERM": "xterm-256color"]), .ansi16)
        XCTAssertEqual(ColorMode.detect(environment: ["COLORTERM": "truecolor", "NO_COLOR": "1"]), ColorMode.none)
        XCTAssertEqual(ColorMode.detect(environment: ["TERM": "dumb"]), ColorMode.none)
    }

    func testKeysFromBytes() {
        var decoder = KeyDecoder()
        XCTAssertEqual(decoder.feed(Array("\u{1B}[C\u{1B}[D\u{1B}OA\u{1B}[Bq+[".utf8)),
                       [.right, .left, .up, .down, .character("q"), .character("+"), .character("[")])
        XCTAssertEqual(decoder.feed([0x03]), [.interrupt])
        XCTAssertEqual(decoder.feed([0x1B, UInt8(ascii: "[")]), [], "a sequence cut off is kept")
        XCTAssertEqual(decoder.feed([UInt8(ascii: "C")]), [.right])
        XCTAssertEqual(decoder.feed(Array("\u{1B}[1;5C".utf8)), [.right], "modifiers are ignored")
    }

    func testKeysBecomeIntents() {
        var scene = Scene.standard
        XCTAssertEqual(PlayKeys.action(for: .right, scene: scene), .dragonForward)
        XCTAssertEqual(PlayKeys.action(for: .left, scene: scene), .dragonBack)
        XCTAssertEqual(PlayKeys.action(for: .up, scene: scene), .nudgeHappiness(5))
        XCTAssertEqual(PlayKeys.action(for: .down, scene: scene), .nudgeHappiness(-5))
        XCTAssertEqual(PlayKeys.action(for: .character("+"), scene: scene), .pinch(1.1))
        XCTAssertEqual(PlayKeys.action(for: .character("]"), scene: scene), .setRate(0.6))
        XCTAssertEqual(PlayKeys.action(for: .character("["), scene: scene), .setRate(0.4))
        XCTAssertEqual(PlayKeys.action(for: .character("h"), scene: scene), .toggleHidden)
        XCTAssertNil(PlayKeys.action(for: .character("x"), scene: scene))
        scene.heart.rate = 0.97
        XCTAssertEqual(PlayKeys.action(for: .character("]"), scene: scene), .setRate(1))
        XCTAssertTrue(PlayKeys.isQuit(.character("q")))
    }

    private let sizes = PlayLayout.Sizes(scene: (1015, 330), views: [(.face, 300, 300), (.heart, 300, 300), (.dragon, 375, 310)])

    func testAWideTerminalShowsTheCompositeScene() {
        let layout = PlayLayout(columns: 120, rows: 40, sizes: sizes)
        XCTAssertEqual(layout.pictureRows, 34)
        XCTAssertEqual(layout.pixelHeight, 68)
        XCTAssertEqual(layout.placements.count, 1)
        let scene = layout.placements[0]
        XCTAssertEqual(scene.view, .scene)
        XCTAssertEqual(scene.width, 120)
        XCTAssertEqual(scene.height, 39)
        XCTAssertEqual(scene.y % 2, 0, "starts at the top of a cell")
        XCTAssertFalse(layout.isStacked)
    }

    func testANarrowTallTerminalStacksTheViews() {
        let layout = PlayLayout(columns: 70, rows: 80, sizes: sizes)
        XCTAssertTrue(layout.isStacked)
        XCTAssertEqual(layout.placements.map(\.view), [.face, .heart, .dragon])
        for (upper, lower) in zip(layout.placements, layout.placements.dropFirst()) {
            XCTAssertEqual(upper.y + upper.height, lower.y, "one under the other")
        }
        XCTAssertLessThanOrEqual(layout.placements.last.map { $0.y + $0.height } ?? 0, layout.pixelHeight)
        XCTAssertTrue(layout.placements.allSatisfy { $0.x >= 0 && $0.x + $0.width <= 70 })
    }

    func testATerminalBelowTheMinimumSaysHowLargeItMustBe() {
        let layout = PlayLayout(columns: 30, rows: 8, sizes: sizes)
        XCTAssertTrue(layout.tooSmall)
        XCTAssertEqual(layout.placements, [])
        let rows = PlayScreen(layout: layout).rows(picture: [], texts: PlayScreen.Texts(
            title: "t", shortTitle: "t", statusLabel: "s", values: "v", presence: "p", steering: "n", keys: "k"))
        XCTAssertEqual(rows, ["Too small: 30×8. This view", "needs at least 68×16", "characters. Enlarge the",
                              "terminal, or press q to quit."])
        XCTAssertTrue(PlayLayout(columns: 67, rows: 40, sizes: sizes).tooSmall)
        XCTAssertTrue(PlayLayout(columns: 200, rows: 15, sizes: sizes).tooSmall)
        XCTAssertFalse(PlayLayout(columns: 68, rows: 16, sizes: sizes).tooSmall)
        XCTAssertEqual(PlayScreen.wrap("a bb ccc dddddd", width: 4), ["a bb", "ccc", "dddd"])
    }

    func testTheScreenHasTheTitlePictureAndTextRows() {
        let layout = PlayLayout(columns: PlayLayout.minimumColumns, rows: PlayLayout.minimumRows, sizes: sizes)
        let texts = PlayScreen.texts(room: "t", url: "ws://h:1/ws", you: Participant(id: "c1", name: "me"),
                                     connection: "connected", seq: 3, scene: .standard,
                                     statusLabel: "alice: forward, (x,y) = (20, 10)", lastAnswer: "applied  dragon (20, 10)",
                                     presence: [Participant(id: "c1", name: "me"), Participant(id: "c2", name: "alice")],
                                     presenceCount: 2, steering: "steering: nobody")
        XCTAssertEqual(texts.presence, "here (2): me (you), alice")
        XCTAssertTrue(texts.values.hasPrefix("happiness 50 · scale 0.9 · heart 0.5 · dragon (10, 10) shown   last: applied"))
        let rows = PlayScreen(layout: layout).rows(picture: Array(repeating: "x", count: layout.pictureRows), texts: texts)
        XCTAssertEqual(rows.count, 16)
        XCTAssertTrue(rows[0].contains(" Happy · room t · me · ws://h:1/ws · connected · seq 3"))
        XCTAssertEqual(rows[11], ANSI.bold + "alice: forward, (x,y) = (20, 10)" + ANSI.reset)
        XCTAssertEqual(rows[14], "steering: nobody")
        XCTAssertEqual(rows[15], PlayKeys.help, "the key help fits the smallest terminal")
        XCTAssertEqual(PlayScreen.fit("abcdef", width: 4), "abc…")
        XCTAssertEqual(PlayScreen.fit("ab", width: 4, pad: true), "ab  ")

        // A long address gives way before the connection and the seq do.
        let long = PlayScreen.texts(room: "kitchen", url: "wss://happy.example.org:8443/ws", you: Participant(id: "c1", name: "dave"),
                                    connection: "connected", seq: 1234, scene: nil, statusLabel: "", lastAnswer: nil,
                                    presence: [], presenceCount: 0, steering: "")
        let title = PlayScreen(layout: layout).rows(picture: [], texts: long)[0]
        XCTAssertTrue(title.contains(" Happy · room kitchen · dave · connected · seq 1234 "), title)
    }

    func testTheRenderedSceneBecomesTerminalLines() throws {
        let artPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("web/assets/scene-art.json").path
        let renderer = FrameRenderer(art: try SceneArt.load(path: artPath), geometry: SceneGeometry())
        let layout = PlayLayout(columns: 100, rows: 30, sizes: PlayLayout.Sizes(renderer: renderer))
        let state = FrameState(scene: .standard, dragonStatus: DragonStatus.seedInitial, step: 0)
        let lines = try PlayPicture(renderer: renderer, encoder: CellEncoder(mode: .truecolor)).lines(layout, state: state)
        XCTAssertEqual(lines.count, layout.pictureRows)
        XCTAssertTrue(lines.joined().contains("48;2;0;255;255m"), "the dragon's cyan scene")
        XCTAssertTrue(lines.joined().contains("255;0;0m"), "the heart's red fill")
        let plain = try PlayPicture(renderer: renderer, encoder: CellEncoder(mode: .none)).lines(layout, state: state)
        XCTAssertTrue(plain.allSatisfy { $0.count == 100 && !$0.contains("\u{1B}") })
    }
}
