import HappyCore
import HappyRender
import XCTest

/// PNG output: signature, header, and every view at the smallest and largest sizes.
final class PNGEncodingTests: XCTestCase {
    private let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    private func header(_ png: [UInt8]) -> (width: Int, height: Int, depth: UInt8, colorType: UInt8)? {
        guard png.count > 33, Array(png[0..<8]) == signature, Array(png[12..<16]) == Array("IHDR".utf8) else { return nil }
        let int = { (offset: Int) in png[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (int(16), int(20), png[24], png[25])
    }

    func testEveryViewEncodesAtDefaultSmallestAndLargestSizes() throws {
        for view in FrameView.allCases {
            let defaultSize = RenderFixtures.renderer.defaultSize(of: view)
            for (width, height) in [defaultSize, (16, 16), (2048, 2048), (16, 2048)] {
                let png = try RenderFixtures.renderer.png(view, RenderFixtures.state(), width: width, height: height)
                let ihdr = try XCTUnwrap(header(png), "\(view) \(width)x\(height) is not a PNG")
                XCTAssertEqual(ihdr.width, width, "\(view)")
                XCTAssertEqual(ihdr.height, height, "\(view)")
                XCTAssertEqual(ihdr.depth, 8)
                // RGBA, or RGB when every pixel is opaque.
                XCTAssertTrue([2, 6].contains(ihdr.colorType), "\(view): colour type \(ihdr.colorType)")
                XCTAssertEqual(Array(png.suffix(8)), [0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82], "ends with IEND")
            }
        }
    }

    func testRenderedImageMatchesTheRequestedSize() throws {
        let image = try RenderFixtures.render(.heart, width: 123, height: 45)
        XCTAssertEqual(image.width, 123)
        XCTAssertEqual(image.height, 45)
        _ = image.pixel(x: 122, y: 44)
    }

    func testSameStateGivesSameBytesAndChangesShowInTheBytes() throws {
        let renderer = RenderFixtures.renderer
        let a = try renderer.png(.face, RenderFixtures.state(), width: 300, height: 300)
        let b = try renderer.png(.face, RenderFixtures.state(), width: 300, height: 300)
        let c = try renderer.png(.face, RenderFixtures.state { $0.scene.face.happiness = 90 }, width: 300, height: 300)
        XCTAssertEqual(a, b)
        XCTAssertNotEqual(a, c)
    }

    func testSizesOutsideTheRendererLimitsAreErrors() {
        XCTAssertThrowsError(try RenderFixtures.renderer.render(.face, RenderFixtures.state(), width: 0, height: 10))
        XCTAssertThrowsError(try RenderFixtures.renderer.render(.face, RenderFixtures.state(), width: 10, height: 100_000))
    }
}
