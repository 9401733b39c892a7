@testable import HappyClientCLI
import Foundation
import HappyCore
import HappyRender
import XCTest

/// `play` draws the composite scene with HappyRender; a face at the largest
/// scale stays in its own box there too. Read back from the 24-bit
/// terminal lines `play` writes.
final class PlayPictureClippingTests: XCTestCase {
    private let art: SceneArt = {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("web/assets/scene-art.json").path
        do { return try SceneArt.load(path: path) } catch { fatalError("\(error)") }
    }()

    func testALargeFaceStaysOutOfTheHeartInThePlayPicture() throws {
        let renderer = FrameRenderer(art: art, geometry: SceneGeometry())
        let layout = PlayLayout(columns: 300, rows: 120, sizes: PlayLayout.Sizes(renderer: renderer))
        let scene = try XCTUnwrap(layout.placements.first)
        XCTAssertEqual(layout.placements.count, 1)
        XCTAssertEqual(scene.view, .scene, "a wide terminal shows the composite")

        var state = FrameState(scene: .standard, dragonStatus: DragonStatus.seedInitial, step: 0)
        state.scene.face.scale = 2.0
        let lines = try PlayPicture(renderer: renderer, encoder: CellEncoder(mode: .truecolor)).lines(layout, state: state)
        let picture = TruecolorPicture(lines)

        // The art's boxes in picture pixels, one pixel in from each side for blending at the edges.
        let k = Double(scene.width) / art.composite.width
        func pixels(_ box: ArtRect) -> (x: Range<Int>, y: Range<Int>) {
            (scene.x + Int((box.x * k).rounded(.up)) + 1 ..< scene.x + Int(((box.x + box.width) * k)) - 1,
             scene.y + Int((box.y * k).rounded(.up)) + 1 ..< scene.y + Int(((box.y + box.height) * k)) - 1)
        }
        let heart = pixels(art.composite.heart), face = pixels(art.composite.face)
        XCTAssertEqual(picture.count(x: heart.x, y: heart.y, where: \.isBluish), 0, "face ink over the heart")
        XCTAssertGreaterThan(picture.count(x: face.x, y: face.y, where: \.isBluish), 20,
                             "the face's eyes and mouth are still drawn")
    }
}

private extension RGB {
    /// Blue well above red and green: the face's stroke, alone or blended.
    var isBluish: Bool { Int(blue) - max(Int(red), Int(green)) > 60 }
}

/// The pixels of `CellEncoder(mode: .truecolor)` lines: each character is a
/// column of two pixels, `▀` foreground over background, `▄` the reverse,
/// a space the background in both.
private struct TruecolorPicture {
    private var rows: [[RGB?]] = []

    init(_ lines: [String]) {
        for line in lines {
            var top: [RGB?] = [], bottom: [RGB?] = []
            var foreground: RGB?, background: RGB?
            var characters = Substring(line)
            while let character = characters.first {
                if character == "\u{1B}", let end = characters.firstIndex(of: "m") {
                    let code = characters[characters.index(characters.startIndex, offsetBy: 2)..<end]
                    let numbers = code.split(separator: ";").compactMap { UInt8($0) }
                    if numbers.count == 5, numbers[1] == 2 {
                        let color = RGB(red: numbers[2], green: numbers[3], blue: numbers[4])
                        if numbers[0] == 38 { foreground = color } else { background = color }
                    } else if code == "49" {
                        background = nil
                    }
                    characters = characters[characters.index(after: end)...]
                    continue
                }
                switch character {
                case "▀": top.append(foreground); bottom.append(background)
                case "▄": top.append(background); bottom.append(foreground)
                default: top.append(background); bottom.append(background)
                }
                characters = characters.dropFirst()
            }
            rows += [top, bottom]
        }
    }

    func count(x: Range<Int>, y: Range<Int>, where predicate: (RGB) -> Bool) -> Int {
        var count = 0
        for row in y where row < rows.count {
            for column in x where column < rows[row].count {
                if let pixel = rows[row][column], predicate(pixel) { count += 1 }
            }
        }
        return count
    }
}
