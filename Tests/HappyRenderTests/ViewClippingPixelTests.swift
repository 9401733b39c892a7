import HappyCore
import HappyRender
import XCTest

/// Every view stays inside its own box, in the composite scene as in a
/// view alone, however large the face or thick the heart's outline. The
/// composite is drawn at the art's own size (1015×330), so its pixels are
/// the art's coordinates: face box x 10..<310, heart box x 320..<620,
/// both y 15..<315, dragon box from x 630.
final class ViewClippingPixelTests: XCTestCase {
    private let art = RenderFixtures.art.composite

    private func composite(_ change: (inout FrameState) -> Void) throws -> RenderedImage {
        try RenderFixtures.render(.scene, width: Int(art.width), height: Int(art.height), change)
    }

    func testALargeFaceDrawsNothingOverTheHeart() throws {
        let image = try composite { $0.scene.face.scale = 2.0 }
        let heart = art.heart.pixelRanges
        XCTAssertEqual(image.count(where: \.isFaceInk, x: heart.x, y: heart.y), 0,
                       "face-blue pixels inside the heart's box at scale 2")
        XCTAssertEqual(image.countOutside(art.face, where: \.isSolidFaceBlue), 0,
                       "solid face-blue pixels outside the face's box at scale 2")
    }

    func testALargeFaceIsClippedNotLeftOut() throws {
        // Scale 2: radius 300 around (160, 165), the circle lies outside the box,
        // the eyes (radius 30 at (70, 75) and (250, 75)) and the mouth (y 285) inside.
        let large = try composite { $0.scene.face.scale = 2.0 }
        large.assertPixel(250 + 30, 75, is: "#0000ff", "right edge of the right eye")
        XCTAssertGreaterThan(large.count(matching: "#0000ff", x: 40..<280, y: 280..<290), 150, "the mouth")

        // Scale 1.2: radius 180 crosses the box's right edge (x 310) at y ≈ 65 and ≈ 264.
        let wide = try composite { $0.scene.face.scale = 1.2 }
        XCTAssertGreaterThan(wide.count(matching: "#0000ff", x: 305..<310, y: 55..<75), 0,
                             "the circle reaches the box's right edge")
        XCTAssertEqual(wide.count(where: \.isFaceInk, x: 310..<330, y: 0..<330), 0,
                       "and stops there: nothing in the gap or the heart's first columns")
    }

    func testAThickHeartOutlineStaysInItsBox() throws {
        // lineWidth 20 strokes 10 px each side of an outline 5 px inside the box:
        // the lobes' tops and the left lobe's side would reach 5 px beyond it.
        let image = try composite {
            $0.scene.heart.lineWidth = 20
            $0.scene.heart.strokeColor = RGBColor(red: 0, green: 0, blue: 0)
        }
        let heart = art.heart.pixelRanges
        XCTAssertEqual(image.count(where: \.isDark, x: heart.x, y: 0..<heart.y.lowerBound), 0,
                       "stroke above the heart's box")
        XCTAssertEqual(image.count(where: \.isDark, x: art.face.pixelRanges.x.upperBound..<heart.x.lowerBound,
                                   y: heart.y), 0, "stroke left of the heart's box")
        XCTAssertGreaterThan(image.count(where: \.isDark, x: heart.x.lowerBound..<heart.x.lowerBound + 3,
                                         y: heart.y), 20, "the outline still runs along the box's left edge")
    }

    func testTheFaceViewAloneIsClippedToItsImage() throws {
        // 500×200 at scale 2: radius 200 around (250, 100); the circle leaves
        // through the top and bottom edges at x ≈ 77 and ≈ 423.
        let image = try RenderFixtures.render(.face, width: 500, height: 200) { $0.scene.face.scale = 2.0 }
        XCTAssertGreaterThan(image.count(matching: "#0000ff", x: 65..<90, y: 0..<2), 0, "top edge, left crossing")
        XCTAssertGreaterThan(image.count(matching: "#0000ff", x: 410..<435, y: 198..<200), 0,
                             "bottom edge, right crossing")
        image.assertPixel(250 - 60 - 20, 40, is: "#0000ff", "left eye (radius 20 at (190, 40))")
    }
}

private extension ArtRect {
    /// The whole pixels of the box (the art's boxes lie on whole pixels).
    var pixelRanges: (x: Range<Int>, y: Range<Int>) {
        (Int(x)..<Int(x + width), Int(y)..<Int(y + height))
    }
}

private extension Pixel {
    /// The face's blue, solid or blended with what lies under it: blue well
    /// above red and green. Nothing else in the default scene is blue inside
    /// the heart's box.
    var isFaceInk: Bool {
        alpha > 0 && Int(blue) - max(Int(red), Int(green)) > 60
    }

    /// The core of a face stroke: pure #0000ff (the dragon panel's blue
    /// buttons, #3478f6, are far from it).
    var isSolidFaceBlue: Bool { matches("#0000ff", tolerance: 40) }

    var isDark: Bool { alpha > 128 && max(red, green, blue) < 100 }
}

private extension RenderedImage {
    func count(where predicate: (Pixel) -> Bool, x: Range<Int>, y: Range<Int>) -> Int {
        var count = 0
        for row in y { for column in x where predicate(pixel(x: column, y: row)) { count += 1 } }
        return count
    }

    func countOutside(_ box: ArtRect, where predicate: (Pixel) -> Bool) -> Int {
        var count = 0
        for row in 0..<height {
            for column in 0..<width where !box.contains(x: Double(column), y: Double(row)) {
                if predicate(pixel(x: column, y: row)) { count += 1 }
            }
        }
        return count
    }
}
