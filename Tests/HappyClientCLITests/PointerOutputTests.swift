@testable import HappyClientCLI
import Foundation
import HappyClientKit
import HappyCore
import HappyRender
import Synchronization
import XCTest

/// Live pointers in `happyclient`: `watch --pointers` parsing and lines,
/// and in `play` the own pointer of each key, who is steering, and the
/// markers over the picture.
final class PointerOutputTests: XCTestCase {
    private func entry(_ id: String, _ name: String, _ view: PointerView, x: Double = 0.5, y: Double = 0.5,
                       _ activity: PointerActivity = .idle) -> PointerEntry {
        PointerEntry(id: id, name: name, position: PointerPosition(view: view, x: x, y: y, activity: activity))
    }

    private func parse(_ arguments: [String]) throws -> Command {
        try CommandLineParser.parse(arguments).command
    }

    // MARK: watch --pointers

    func testWatchTakesPointers() throws {
        XCTAssertEqual(try parse(["watch"]), .watch(json: false, pointers: false))
        XCTAssertEqual(try parse(["watch", "--pointers"]), .watch(json: false, pointers: true))
        XCTAssertEqual(try parse(["watch", "--json", "--pointers"]), .watch(json: true, pointers: true))
        XCTAssertThrowsError(try parse(["watch", "--pointers=yes"])) { error in
            XCTAssertEqual((error as? UsageError)?.message, "--pointers takes no value")
        }
        XCTAssertThrowsError(try parse(["--pointers", "watch"])) { error in
            XCTAssertEqual((error as? UsageError)?.message, "--pointers is an option of watch; put it after the command")
        }
        XCTAssertThrowsError(try parse(["state", "--pointers"]))
    }

    func testTheHelpTellsOfPointers() {
        XCTAssertTrue(HelpText.general.contains("watch [--json] [--pointers]"), HelpText.general)
        let watch = HelpText.help(for: .watch)
        XCTAssertTrue(watch.hasPrefix("usage: happyclient [options] watch [--json] [--pointers]"), watch)
        XCTAssertTrue(watch.contains("--pointers   also where the others point"), watch)
        XCTAssertTrue(HelpText.help(for: .play).contains("steering: alice (face,"), "play tells of the markers")
    }

    func testPointerLines() {
        let lines = EventLines(offsetSeconds: 0)
        XCTAssertEqual(lines.pointer(entry("c7", "alice", .face, x: 0.42, y: 0.61, .drag), atMilliseconds: 1764504245000),
                       "12:04:05 pointer alice (c7)  face (0.42, 0.61) drag")
        XCTAssertEqual(lines.pointerGone(id: "c7", name: "alice", atMilliseconds: 1764504246000),
                       "12:04:06 pointer alice (c7)  gone")
        XCTAssertEqual(lines.pointerGone(id: "c9", name: nil, atMilliseconds: 1764504246000), "12:04:06 pointer c9  gone")
        XCTAssertEqual(EventLines.place(PointerPosition(view: .dragon, x: 1, y: 0, activity: .press)), "dragon (1.00, 0.00) press")
    }

    /// What a printer writes, line by line.
    private final class Captured: Sendable {
        let out = Mutex<[String]>([])
        var console: Console { Console(out: { line in self.out.withLock { $0.append(line) } }, err: { _ in }) }
        var lines: [String] { out.withLock { $0 } }
    }

    func testWatchPrintsAWelcomesPointersThenEachMoveAndGoneWithTheNameKept() {
        let printer = WatchPrinter(console: Captured().console, configuration: SessionConfiguration(server: WebSocketURL("ws://127.0.0.1:9")!), json: false, pointers: true,
                                   offsetSeconds: 0)
        let alice = entry("c7", "alice", .heart, .drag)
        let start = printer.pointerLines(PointerUpdate(cause: .welcome, moved: [alice], gone: [], removed: [],
                                                       pointers: ["c7": alice]), atMilliseconds: 0)
        XCTAssertEqual(start, ["00:00:00 pointer alice (c7)  heart (0.50, 0.50) drag"])
        // alice left: the session forgot her pointer before the batch that lists it as gone.
        let gone = printer.pointerLines(PointerUpdate(cause: .batch, moved: [], gone: ["c7"], removed: [], pointers: [:]),
                                        atMilliseconds: 1000)
        XCTAssertEqual(gone, ["00:00:01 pointer alice (c7)  gone"])
    }

    func testWatchPrintsBatchesAsReceivedWithJSONAndNothingWithoutPointers() {
        let text = #"{"type":"pointers","room":"r","pointers":[],"gone":["c7"]}"#
        let batch = PointerUpdate(cause: .batch, moved: [], gone: ["c7"], removed: [], pointers: [:])
        let welcome = PointerUpdate(cause: .welcome, moved: [entry("c8", "bob", .face)], gone: [], removed: [],
                                    pointers: [:])
        let configuration = SessionConfiguration(server: WebSocketURL("ws://127.0.0.1:9")!)

        let json = Captured()
        let jsonPrinter = WatchPrinter(console: json.console, configuration: configuration, json: true, pointers: true,
                                       offsetSeconds: 0)
        XCTAssertNil(jsonPrinter.print(.pointers(welcome, text: nil)))
        XCTAssertNil(jsonPrinter.print(.pointers(batch, text: text)))
        XCTAssertEqual(json.lines, [text], "only the server's pointers messages")

        let off = Captured()
        let plain = WatchPrinter(console: off.console, configuration: configuration, json: false, offsetSeconds: 0)
        XCTAssertNil(plain.print(.pointers(batch, text: text)))
        XCTAssertEqual(off.lines, [], "without --pointers")
    }

    // MARK: play: this client's pointer

    private let art: SceneArt = {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("web/assets/scene-art.json").path
        do { return try SceneArt.load(path: path) } catch { fatalError("\(error)") }
    }()

    func testKeysPointAtTheViewTheyChange() {
        let scene = Scene.standard
        func own(_ key: Key) -> PointerPosition? {
            PlayKeys.action(for: key, scene: scene).map {
                PlayPointers.own(for: $0, scene: scene, art: art, geometry: SceneGeometry())
            }
        }
        XCTAssertEqual(own(.up)?.view, .face)
        XCTAssertEqual(own(.up)?.activity, .drag)
        XCTAssertLessThan(own(.up)!.y, own(.down)!.y, "higher for a happier face")
        XCTAssertEqual(own(.character("+")), PointerPosition(view: .face, x: 0.5, y: 0.5, activity: .pinch))
        XCTAssertEqual(own(.character("]")), PointerPosition(view: .heart, x: 0.5, y: 0.4, activity: .drag), "at rate 0.6")
        let forward = own(.right), back = own(.left), hide = own(.character("h"))
        XCTAssertEqual([forward?.view, back?.view, hide?.view], [.dragon, .dragon, .dragon])
        XCTAssertEqual(forward?.activity, .press)
        // The seed's buttons: back bottom left and forward bottom right of the cyan scene, hide in the row below.
        XCTAssertGreaterThan(forward!.x, 0.8)
        XCTAssertLessThan(back!.x, 0.2)
        XCTAssertEqual(forward!.y, back!.y, accuracy: 1e-9)
        XCTAssertEqual(hide!.x, 0.5, accuracy: 1e-9)
        XCTAssertGreaterThan(hide!.y, forward!.y)
        XCTAssertEqual(PlayPointers.own(for: .dragonForward, scene: scene, art: nil, geometry: SceneGeometry()),
                       PointerPosition(view: .dragon, x: 0.5, y: 0.5, activity: .press), "no art: the middle")
    }

    // MARK: play: who is steering

    func testSteeringNamesBusyPointersAndRecentlyMovedIdleOnes() {
        let alice = entry("c7", "alice", .face, .drag)
        let bob = entry("c8", "bob", .dragon, .press)
        let carol = entry("c9", "carol", .heart)
        let pointers = [carol, bob, alice]
        XCTAssertEqual(PlayPointers.steeringLine(pointers, movedAt: ["c9": 99], now: 100),
                       "steering: alice (face, drag), bob (dragon, press), carol (heart, idle)")
        XCTAssertEqual(PlayPointers.steeringLine(pointers, movedAt: ["c9": 97], now: 100),
                       "steering: alice (face, drag), bob (dragon, press)", "idle and still for 3 s")
        XCTAssertEqual(PlayPointers.steeringLine([carol], movedAt: [:], now: 100), "steering: nobody",
                       "idle since before this client joined")
        XCTAssertEqual(PlayPointers.steeringLine([], movedAt: [:], now: 0), "steering: nobody")
    }

    // MARK: play: markers

    private let sizes = PlayLayout.Sizes(scene: (1015, 330), views: [(.face, 300, 300), (.heart, 300, 300), (.dragon, 375, 310)])

    func testMarkersSitInTheirViewsPlacementWhenStacked() throws {
        let layout = PlayLayout(columns: 70, rows: 80, sizes: sizes)
        XCTAssertTrue(layout.isStacked)
        let heart = try XCTUnwrap(layout.placements.first { $0.view == .heart })
        let marks = PlayPointers.marks([entry("c7", "alice", .heart, x: 0, y: 0), entry("c8", "bob", .heart, x: 1, y: 1)],
                                       layout: layout, renderer: nil)
        XCTAssertEqual(marks.map(\.character), ["A", "B"])
        XCTAssertEqual(marks[0].column, heart.x)
        XCTAssertEqual(marks[0].row, heart.y / 2)
        XCTAssertEqual(marks[1].column, heart.x + heart.width - 1, "x 1 is the last column inside")
        XCTAssertEqual(marks[1].row, (heart.y + heart.height - 1) / 2)
    }

    func testMarkersFindTheirViewInsideTheComposite() throws {
        let renderer = FrameRenderer(art: art, geometry: SceneGeometry())
        let layout = PlayLayout(columns: 120, rows: 40, sizes: PlayLayout.Sizes(renderer: renderer))
        let scene = try XCTUnwrap(layout.placements.first)
        XCTAssertEqual(scene.view, .scene)
        let k = Double(scene.width) / art.composite.width
        let faceBox = art.composite.face, heartBox = art.composite.heart
        let marks = PlayPointers.marks([entry("c7", "alice", .face), entry("c8", "bob", .heart)], layout: layout, renderer: renderer)
        XCTAssertEqual(marks.count, 2)
        XCTAssertEqual(Double(marks[0].column), Double(scene.x) + (faceBox.x + faceBox.width / 2) * k, accuracy: 1)
        XCTAssertEqual(Double(marks[0].row * 2), Double(scene.y) + (faceBox.y + faceBox.height / 2) * k, accuracy: 2)
        XCTAssertEqual(Double(marks[1].column), Double(scene.x) + (heartBox.x + heartBox.width / 2) * k, accuracy: 1)
        let dragon = try XCTUnwrap(PlayPointers.box(of: .dragon, in: layout, renderer: renderer))
        XCTAssertGreaterThanOrEqual(dragon.x, Double(scene.x) + art.composite.dragon.x * k - 0.5)
        XCTAssertLessThanOrEqual(dragon.x + dragon.width, Double(scene.x) + (art.composite.dragon.x + art.composite.dragon.width) * k + 0.5)
        let panel = renderer.defaultSize(of: .dragon)
        XCTAssertEqual(dragon.width / dragon.height, Double(panel.width) / Double(panel.height), accuracy: 0.01,
                       "the panel keeps its aspect, as drawn")
    }

    func testInitialsAndColours() {
        XCTAssertEqual(PlayPointers.initial(of: "alice"), "A")
        XCTAssertEqual(PlayPointers.initial(of: "guest-c7"), "G")
        XCTAssertEqual(PlayPointers.initial(of: "Élodie 2"), "L", "one cell wide: ASCII only")
        XCTAssertEqual(PlayPointers.initial(of: "7up"), "7")
        XCTAssertEqual(PlayPointers.initial(of: "ü"), "*")
        XCTAssertEqual(PlayPointers.color(for: "c7"), PlayPointers.color(for: "c7"))
        let colours = Set((1...40).map { PlayPointers.color(for: "c\($0)") })
        XCTAssertGreaterThan(colours.count, 3, "different people, different colours")
    }

    func testMarksAreDrawnOverThePixels() {
        let red = RGB(red: 255, green: 0, blue: 0)
        let grid = PixelGrid(width: 3, height: 4, fill: red)
        let gold = PlayPointers.palette[0]
        let mark = CellMark(column: 1, row: 1, character: "A", color: gold)
        let lines = CellEncoder(mode: .truecolor).lines(grid, marks: [mark, CellMark(column: 9, row: 0, character: "Z", color: gold)])
        XCTAssertEqual(lines[0], "\u{1B}[48;2;255;0;0m   \u{1B}[0m", "a mark outside the grid is left out")
        XCTAssertEqual(lines[1], "\u{1B}[48;2;255;0;0m "
                       + "\u{1B}[1m\u{1B}[48;2;255;215;0m\u{1B}[38;2;0;0;0mA\u{1B}[0m"
                       + "\u{1B}[48;2;255;0;0m \u{1B}[0m", "the colour is set again after the mark")
        let shade = CellEncoder.shade(red, red)
        XCTAssertEqual(CellEncoder(mode: .none).lines(grid, marks: [mark]), ["\(shade)\(shade)\(shade)", "\(shade)A\(shade)"])
    }

    func testThePlayScreenHasASteeringRow() {
        let layout = PlayLayout(columns: 68, rows: 16, sizes: sizes)
        let texts = PlayScreen.texts(room: "t", url: "ws://h:1/ws", you: nil, connection: "connected", seq: 0, scene: nil,
                                     statusLabel: "s", lastAnswer: nil, presence: [], presenceCount: 1,
                                     steering: "steering: alice (face, drag)")
        let rows = PlayScreen(layout: layout).rows(picture: [], texts: texts)
        XCTAssertEqual(rows.count, 16)
        XCTAssertEqual(rows[14], "steering: alice (face, drag)")
        XCTAssertEqual(rows[15], PlayKeys.help)
    }
}
