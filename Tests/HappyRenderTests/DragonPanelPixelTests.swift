import HappyCore
import HappyRender
import XCTest

/// The dragon panel at its default 375×310: the cyan scene (0...180), the
/// button row (180...250) and the purple status label (250...310). The
/// dragon's belly is an ellipse at (51, 69) of its 100×100 box.
final class DragonPanelPixelTests: XCTestCase {
    private let cyan = "#00ffff", purple = "#800080", belly = "#d4ea7a", body = "#3cb043", button = "#3478f6"

    private func panel(_ change: (inout FrameState) -> Void = { _ in }) throws -> RenderedImage {
        try RenderFixtures.render(.dragon, width: 375, height: 310, change)
    }

    func testDefaultSizeIsThePanel() {
        XCTAssertTrue(RenderFixtures.renderer.defaultSize(of: .dragon) == (375, 310))
        XCTAssertTrue(RenderFixtures.renderer.defaultSize(of: .scene) == (1015, 330))
        XCTAssertTrue(RenderFixtures.renderer.defaultSize(of: .face) == (300, 300))
    }

    func testLayoutColours() throws {
        let image = try panel()
        image.assertPixel(200, 100, is: cyan, "the scene")
        image.assertPixel(200, 5, is: cyan)
        image.assertPixel(5, 200, is: "#ffffff", "the button row")
        image.assertPixel(5, 300, is: purple, "the status label")
        image.assertPixel(370, 255, is: purple)
        image.assertPixel(14, 145, is: button, "back button at (10, 120)")
        image.assertPixel(361, 145, is: button, "forward button at the right edge")
        image.assertPixel(165, 215, is: button, "hide button centred in the row")
    }

    func testDragonMovesWithX() throws {
        for x in [10.0, 120, 260] {
            let image = try panel { $0.scene.dragon.x = x }
            image.assertPixel(Int(x) + 51, 79, is: belly, "belly of the dragon at x \(x)")
            for other in [10.0, 120, 260] where other != x {
                image.assertPixel(Int(other) + 51, 79, is: cyan, "no dragon at x \(other) when it is at \(x)")
            }
        }
        let lower = try panel { $0.scene.dragon.y = 60 }
        lower.assertPixel(61, 129, is: belly, "the dragon follows y too")
    }

    func testHiddenDragonIsNotDrawn() throws {
        let shown = try panel()
        XCTAssertGreaterThan(shown.count(matching: body, x: 0..<375, y: 0..<180), 300)
        let hidden = try panel { $0.scene.dragon.hidden = true }
        XCTAssertEqual(hidden.count(matching: body, x: 0..<375, y: 0..<180), 0)
        XCTAssertEqual(hidden.count(matching: belly, x: 0..<375, y: 0..<180), 0)
        hidden.assertPixel(61, 79, is: cyan)
        // The hide button is crossed out while the dragon is hidden.
        shown.assertPixel(187, 215, is: button, "the eye's pupil")
        hidden.assertPixel(187, 215, is: "#ffffff", "the slash over the eye")
    }

    func testStatusLabelShowsTheText() throws {
        let initial = try panel()
        let moved = try panel { $0.dragonStatus = "forward, (x,y) = (120, 10)" }
        let blank = try panel { $0.dragonStatus = "" }
        XCTAssertEqual(blank.count(matching: "#ffffff", x: 0..<375, y: 250..<310), 0)
        XCTAssertGreaterThan(initial.count(matching: "#ffffff", x: 0..<375, y: 250..<310), 40)
        // Centred: a longer text starts further left.
        let left = { (image: RenderedImage) in
            (0..<375).first { x in (250..<310).contains { image.pixel(x: x, y: $0).matches("#ffffff") } } ?? 375
        }
        XCTAssertLessThan(left(moved), left(initial) - 30)
        XCTAssertGreaterThan(left(initial), 100)
    }

    func testPanelIsLetterboxedWithTransparentMargins() throws {
        let image = try RenderFixtures.render(.dragon, width: 750, height: 300)
        // Scale 300 / 310: 363 wide, centred from x = 193.5.
        image.assertTransparent(10, 150)
        image.assertTransparent(740, 150)
        image.assertPixel(375, 100, is: cyan)
        image.assertPixel(375, 295, is: purple)
    }

    func testSceneCompositeDrawsTheThreeViews() throws {
        let image = try RenderFixtures.render(.scene, width: 1015, height: 330) { $0.scene.dragon.x = 120 }
        image.assertPixel(5, 5, is: "#ffffff", "composite background")
        image.assertPixel(10 + 150 + 135, 15 + 150, is: "#0000ff", "face circle in (10, 15, 300, 300)")
        image.assertPixel(320 + 150, 15 + 250, is: "#ff0000", "heart fill in (320, 15, 300, 300)")
        image.assertPixel(630 + 120 + 51, 10 + 79, is: belly, "dragon in the panel at (630, 10)")
        image.assertPixel(630 + 5, 10 + 300, is: purple, "status label")
    }

    func testSceneScalesToAnySize() throws {
        let image = try RenderFixtures.render(.scene, width: 2030, height: 660)
        image.assertPixel(2 * (10 + 150 + 135), 2 * (15 + 150), is: "#0000ff", "face circle at twice the size")
        image.assertPixel(2 * (630 + 61), 2 * (10 + 79), is: belly)
    }
}
