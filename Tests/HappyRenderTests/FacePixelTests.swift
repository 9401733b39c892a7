import HappyCore
import HappyRender
import XCTest

/// The face of the Happiness seed, probed pixel by pixel at 300×300:
/// centre (150, 150), radius `scale` × 150, blue strokes 5 wide.
final class FacePixelTests: XCTestCase {
    private let blue = "#0000ff"

    func testCircleRadiusFollowsScale() throws {
        for scale in [0.9, 0.5, 0.2] {
            let image = try RenderFixtures.render(.face) { $0.scene.face.scale = scale }
            let radius = Int(150 * scale)
            image.assertPixel(150 + radius, 150, is: blue, "right edge of the circle at scale \(scale)")
            image.assertPixel(150 - radius - 1, 150, is: blue, "left edge at scale \(scale)")
            image.assertPixel(150, 150 + radius, is: blue, "bottom edge at scale \(scale)")
            image.assertTransparent(150 + radius + 5, 150, "just outside the circle at scale \(scale)")
            image.assertTransparent(150 + radius - 5, 150, "just inside the circle at scale \(scale)")
        }
    }

    func testRadiusUsesHalfTheShortSide() throws {
        let image = try RenderFixtures.render(.face, width: 400, height: 200)
        // size = 200 / 2 * 0.9 = 90 around (200, 100).
        image.assertPixel(290, 100, is: blue)
        image.assertPixel(200, 190, is: blue)
        image.assertTransparent(200 + 135, 100, "a radius from the long side would reach here")
    }

    func testLineWidthIsFive() throws {
        let image = try RenderFixtures.render(.face)
        // The stroke is centred on radius 135: x 282.5 ... 287.5 on the middle row.
        XCTAssertEqual(image.coverage(x: 270..<300, y: 150..<151), 5, accuracy: 0.2)
        XCTAssertEqual(image.count(matching: blue, x: 270..<300, y: 150..<151), 4, "4 whole pixels and two halves")
        XCTAssertTrue(image.pixel(x: 284, y: 150).matches(blue), "the stroke is pure blue")
    }

    func testEyes() throws {
        let image = try RenderFixtures.render(.face)
        // size 135: eyes at (150 ∓ 40.5, 109.5), radius 13.5.
        image.assertPixel(109, 109 - 13, is: blue, "top of the left eye")
        image.assertPixel(190, 109 + 14, is: blue, "bottom of the right eye")
        image.assertTransparent(109, 109, "eyes are strokes, not filled")
    }

    func testMouthCurvesDownWhenSadAndUpWhenHappy() throws {
        // Mouth ends at y = 150 + 0.40 × 135 = 204; the control points move by
        // 0.25 × 135 × smile, so the middle of the curve sits 0.75 of that lower.
        let sad = try RenderFixtures.render(.face) { $0.scene.face.happiness = 0 }
        let neutral = try RenderFixtures.render(.face) { $0.scene.face.happiness = 50 }
        let happy = try RenderFixtures.render(.face) { $0.scene.face.happiness = 100 }

        sad.assertPixel(150, 178, is: blue, "a frown's middle is 25 px above its ends")
        sad.assertTransparent(150, 229)
        neutral.assertPixel(150, 204, is: blue, "a straight mouth")
        neutral.assertTransparent(150, 178)
        neutral.assertTransparent(150, 229)
        happy.assertPixel(150, 229, is: blue, "a smile's middle is 25 px below its ends")
        happy.assertTransparent(150, 178)

        // The ends stay put: (89.25, 204) and (210.75, 204).
        for image in [sad, neutral, happy] {
            XCTAssertGreaterThan(image.count(matching: blue, x: 89..<93, y: 200..<209), 0, "left corner of the mouth")
            XCTAssertGreaterThan(image.count(matching: blue, x: 207..<211, y: 200..<209), 0, "right corner of the mouth")
            XCTAssertEqual(image.count(matching: blue, x: 80..<87, y: 195..<214), 0, "nothing left of the mouth")
        }
    }

    func testMouthAtHappinessSeventyFiveIsBetween() throws {
        let image = try RenderFixtures.render(.face) { $0.scene.face.happiness = 75 }
        // smile 0.5: the middle at 204 + 0.75 × 16.875 = 216.7.
        image.assertPixel(150, 216, is: blue)
        image.assertTransparent(150, 229)
    }
}
