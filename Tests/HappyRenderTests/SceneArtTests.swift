import HappyCore
import HappyRender
import XCTest

/// The shared art file: the repository's copy parses, and mistakes are
/// reported with the field they are in.
final class SceneArtTests: XCTestCase {
    func testRepositoryArtParses() {
        let art = RenderFixtures.art
        XCTAssertEqual(art.dragonBox, 100)
        XCTAssertGreaterThan(art.dragon.count, 10)
        XCTAssertEqual(art.panel.buttons.map(\.name), ["back", "forward", "hide"])
        XCTAssertEqual(art.panel.buttons.map(\.action), ["dragon.back", "dragon.forward", "dragon.toggleHidden"])
        XCTAssertEqual(art.panel.labelColor, RGBColor(hex: "#800080"))
        XCTAssertEqual(art.panel.sceneColor, RGBColor(hex: "#00ffff"))
        XCTAssertEqual(art.panel.labelHeight, 60)
        XCTAssertEqual(art.panel.initialStatus, DragonStatus.seedInitial)
        XCTAssertEqual(art.composite.face, ArtRect(x: 10, y: 15, width: 300, height: 300))
    }

    private func parseError(_ mutate: (inout String) -> Void) -> String {
        var text = String(decoding: FileManagerBytes.read(RenderFixtures.artPath), as: UTF8.self)
        mutate(&text)
        do {
            _ = try SceneArt.parse(Array(text.utf8))
            return "parsed"
        } catch {
            return error.message
        }
    }

    func testErrorsNameTheField() {
        XCTAssertEqual(parseError { $0 = $0.replacingOccurrences(of: "\"panel\":", with: "\"panels\":") },
                       "\"panel\" is missing")
        XCTAssertEqual(parseError { $0 = $0.replacingOccurrences(of: "\"sceneColor\": \"#00ffff\"",
                                                                 with: "\"sceneColor\": \"cyan\"") },
                       "panel.sceneColor: must be a colour \"#rrggbb\"")
        XCTAssertTrue(parseError { $0 = $0.replacingOccurrences(of: "{ \"ellipse\": [48, 63, 22, 14]",
                                                                with: "{ \"ellipse\": [48, 63, 22]") }
            .hasPrefix("dragon.shapes["))
        XCTAssertEqual(parseError { $0 = $0.replacingOccurrences(of: "\"M 84 37 L 95 36\"", with: "\"M 84 37 A 95 36\"") }
            .contains("unsupported path command A"), true)
        XCTAssertEqual(parseError { $0 = "{" }.hasPrefix("not valid JSON"), true)
        XCTAssertEqual(parseError { $0 = $0.replacingOccurrences(of: "\"format\": 1", with: "\"format\": 2") },
                       "format: only format 1 is understood")
    }

    func testMissingFileIsNamed() {
        XCTAssertThrowsError(try SceneArt.load(path: "/nonexistent/scene-art.json")) { error in
            XCTAssertEqual((error as? SceneArtError)?.message,
                           "scene art /nonexistent/scene-art.json: the file is missing or unreadable")
        }
    }

    func testPathDataSubset() throws {
        let json = #"""
        { "dragon": { "box": 10, "shapes": [
            { "path": "M 0 0 L 10 0 H 20 V 5 C 1 2 3 4 5 6 Q 7 8 9 10 Z", "fill": "#000000" },
            { "path": "M0,0 10,10 -2.5e1,0", "stroke": "#000000" } ] },
          "panel": { "sceneColor": "#00ffff", "rowHeight": 0, "rowColor": "#ffffff", "labelHeight": 0,
                     "labelColor": "#800080", "textColor": "#ffffff", "fontSize": 15, "initialStatus": "",
                     "buttons": [] },
          "scene": { "width": 10, "height": 10, "background": "#ffffff",
                     "face": { "x": 0, "y": 0, "width": 1, "height": 1 },
                     "heart": { "x": 0, "y": 0, "width": 1, "height": 1 },
                     "dragon": { "x": 0, "y": 0, "width": 1, "height": 1 } } }
        """#
        let art = try SceneArt.parse(Array(json.utf8))
        guard case .path(let first) = art.dragon[0].outline, case .path(let second) = art.dragon[1].outline else {
            return XCTFail("paths expected")
        }
        XCTAssertEqual(first, [.move(x: 0, y: 0), .line(x: 10, y: 0), .line(x: 20, y: 0), .line(x: 20, y: 5),
                               .cubic(x1: 1, y1: 2, x2: 3, y2: 4, x: 5, y: 6), .quad(cx: 7, cy: 8, x: 9, y: 10), .close])
        XCTAssertEqual(second, [.move(x: 0, y: 0), .line(x: 10, y: 10), .line(x: -25, y: 0)])
        XCTAssertNil(art.dragon[1].fill)
        XCTAssertEqual(art.dragon[1].lineWidth, 1)
    }
}

/// Reads a file's bytes for tests.
enum FileManagerBytes {
    static func read(_ path: String) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        return Array(data)
    }
}

import Foundation
