import Foundation
import HappyCore
import HappyRender
import XCTest

/// The heart of the DrawHeart seed at 300×300: margin 5, lobes of radius
/// 72.5 centred at (77.5, 77.5) and (222.5, 77.5), tip at (150, 290); the
/// wave's centre line is at (300 − 15 + 10) × (1 − rate) + 0.
final class HeartPixelTests: XCTestCase {
    private let red = "#ff0000"

    /// The seed's wave at the centre of column `x`: point i is at x = 5 + i − lineWidth,
    /// y = level + 5 cos(π/50 · i + t).
    private func waveY(x: Int, rate: Double, step: Int, lineWidth: Double = 1) -> Double {
        let level = 295 * (1 - rate)
        let i = Double(x) + 0.5 - 5 + lineWidth
        return level + 5 * cos(Double.pi / 50 * i + Double(step) * Double.pi / 50)
    }

    func testFillReachesTheLevelOfRate() throws {
        for (rate, column) in [(0.2, 150), (0.5, 150), (0.8, 75), (0.8, 225)] {
            let image = try RenderFixtures.render(.heart) { $0.scene.heart.rate = rate }
            let top = try XCTUnwrap(image.firstRow(matching: red, x: column, rows: 0...299),
                                    "no fill in column \(column) at rate \(rate)")
            let expected = waveY(x: column, rate: rate, step: 0)
            XCTAssertEqual(Double(top), expected, accuracy: 1.5, "fill top in column \(column) at rate \(rate)")
            // Solid below the wave down to the outline.
            image.assertPixel(column, top + 10, is: red, "rate \(rate)")
        }
    }

    func testRateTwoTenthsAndEightTenthsProbes() throws {
        let low = try RenderFixtures.render(.heart) { $0.scene.heart.rate = 0.2 }
        low.assertPixel(150, 250, is: red, "rate 0.2: the bottom is filled")
        low.assertTransparent(150, 222, "rate 0.2: the middle is empty")
        low.assertTransparent(77, 60, "rate 0.2: the lobes are empty")

        let high = try RenderFixtures.render(.heart) { $0.scene.heart.rate = 0.8 }
        high.assertPixel(77, 70, is: red, "rate 0.8: the lobes are filled")
        high.assertPixel(150, 250, is: red)
        high.assertTransparent(77, 40, "rate 0.8: the top of the lobes stays empty")
    }

    func testNothingIsFilledOutsideTheOutline() throws {
        let image = try RenderFixtures.render(.heart) { $0.scene.heart.rate = 1 }
        image.assertPixel(150, 150, is: red, "full heart")
        let outside = [(2, 2), (297, 2), (2, 297), (297, 297), (150, 30), (150, 296), (20, 250), (280, 250),
                       (40, 200), (260, 200), (1, 150), (298, 150)]
        for (x, y) in outside { image.assertTransparent(x, y, "outside the heart") }
        // No fill colour anywhere in the corners' triangles below the lobes.
        XCTAssertEqual(image.count(matching: red, x: 0..<40, y: 220..<300), 0)
        XCTAssertEqual(image.count(matching: red, x: 260..<300, y: 220..<300), 0)
    }

    func testWavePhaseFollowsStep() throws {
        let first = try RenderFixtures.render(.heart) { $0.step = 0 }
        let quarter = try RenderFixtures.render(.heart) { $0.step = 25 }
        let a = try XCTUnwrap(first.firstRow(matching: red, x: 150, rows: 100...200))
        let b = try XCTUnwrap(quarter.firstRow(matching: red, x: 150, rows: 100...200))
        XCTAssertEqual(Double(a), waveY(x: 150, rate: 0.5, step: 0), accuracy: 1.5)
        XCTAssertEqual(Double(b), waveY(x: 150, rate: 0.5, step: 25), accuracy: 1.5)
        XCTAssertGreaterThan(abs(a - b), 2)
    }

    func testColoursAndLineWidthApply() throws {
        let styled = try RenderFixtures.render(.heart) {
            $0.scene.heart.fillColor = RGBColor(hex: "#00ff00")!
            $0.scene.heart.strokeColor = RGBColor(hex: "#0000ff")!
            $0.scene.heart.lineWidth = 10
        }
        styled.assertPixel(150, 250, is: "#00ff00", "fill colour")
        XCTAssertEqual(styled.count(matching: red, x: 0..<300, y: 0..<300), 0)
        // The top of the left lobe is at y = 5; a 10 wide stroke reaches y = 0.
        styled.assertPixel(77, 1, is: "#0000ff", "wide stroke outside the outline")
        styled.assertPixel(77, 8, is: "#0000ff", "wide stroke inside the outline")

        let thin = try RenderFixtures.render(.heart)
        // A 1 px stroke on y = 5 covers half of rows 4 and 5.
        thin.assertPixel(77, 4, is: "#000000", minAlpha: 100, "default 1 px black stroke")
        thin.assertTransparent(77, 1, "a 1 px stroke does not reach y = 1")
        thin.assertTransparent(77, 8)
    }

    func testNonSquareHeartKeepsTheSeedGeometry() throws {
        let image = try RenderFixtures.render(.heart, width: 400, height: 200) { $0.scene.heart.rate = 0.5 }
        // Radius min(390, 190) / 4 = 47.5; tip at (200, 190).
        image.assertPixel(200, 185, is: red, "near the tip")
        image.assertTransparent(200, 195, "below the tip")
    }
}
