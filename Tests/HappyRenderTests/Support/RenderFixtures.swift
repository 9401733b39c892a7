import Foundation
import HappyCore
import HappyRender
import XCTest

/// The repository's art file and a renderer on it, for pixel tests.
enum RenderFixtures {
    static let repositoryRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" && !FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
            url.deleteLastPathComponent()
        }
        return url
    }()

    static let artPath = repositoryRoot.appendingPathComponent("web/assets/scene-art.json").path

    static let art: SceneArt = {
        do { return try SceneArt.load(path: artPath) } catch { fatalError("\(error)") }
    }()

    static let renderer = FrameRenderer(art: art, geometry: SceneGeometry())

    static func state(_ change: (inout FrameState) -> Void = { _ in }) -> FrameState {
        var state = FrameState(scene: .standard, dragonStatus: DragonStatus.seedInitial, step: 0)
        change(&state)
        return state
    }

    static func render(_ view: FrameView, width: Int = 300, height: Int = 300,
                       _ change: (inout FrameState) -> Void = { _ in }) throws -> RenderedImage {
        try renderer.render(view, state(change), width: width, height: height)
    }
}

extension Pixel {
    /// At least `minAlpha` opaque (default: fully) and within `tolerance` of
    /// `hex` in every channel.
    func matches(_ hex: String, tolerance: Int = 10, minAlpha: UInt8 = 250) -> Bool {
        guard let color = RGBColor(hex: hex) else { return false }
        return alpha >= minAlpha
            && abs(Int(red) - Int(color.red)) <= tolerance
            && abs(Int(green) - Int(color.green)) <= tolerance
            && abs(Int(blue) - Int(color.blue)) <= tolerance
    }

    var isTransparent: Bool { alpha == 0 }
}

extension RenderedImage {
    /// The first row from the top, in column `x` between `rows`, whose pixel matches `hex`.
    func firstRow(matching hex: String, x: Int, rows: ClosedRange<Int>) -> Int? {
        rows.first { pixel(x: x, y: $0).matches(hex) }
    }

    /// How many pixels in the rectangle match `hex`.
    func count(matching hex: String, x: Range<Int>, y: Range<Int>) -> Int {
        var count = 0
        for row in y { for column in x where pixel(x: column, y: row).matches(hex) { count += 1 } }
        return count
    }

    /// Sum of the alpha of the pixels in the rectangle, in whole pixels.
    func coverage(x: Range<Int>, y: Range<Int>) -> Double {
        var sum = 0
        for row in y { for column in x { sum += Int(pixel(x: column, y: row).alpha) } }
        return Double(sum) / 255
    }

    func assertPixel(_ x: Int, _ y: Int, is hex: String, minAlpha: UInt8 = 250, _ message: String = "",
                     file: StaticString = #filePath, line: UInt = #line) {
        let found = pixel(x: x, y: y)
        XCTAssertTrue(found.matches(hex, minAlpha: minAlpha), "(\(x), \(y)) is \(found), expected \(hex). \(message)", file: file, line: line)
    }

    func assertTransparent(_ x: Int, _ y: Int, _ message: String = "",
                           file: StaticString = #filePath, line: UInt = #line) {
        let found = pixel(x: x, y: y)
        XCTAssertTrue(found.isTransparent, "(\(x), \(y)) is \(found), expected transparent. \(message)",
                      file: file, line: line)
    }
}
