import XCTest
import HappyCore

final class SceneModelTests: XCTestCase {
    private func modified() -> Scene {
        var scene = Scene.standard
        scene.face.happiness = 80
        scene.heart.strokeColor = RGBColor(red: 1, green: 2, blue: 3)
        scene.dragon.x = 30
        scene.dragon.hidden = true
        return scene
    }

    // MARK: defaults

    func testStandardSceneMatchesTheProtocolDefaults() {
        let scene = Scene.standard
        XCTAssertEqual(scene.face.happiness, 50)
        XCTAssertEqual(scene.face.smile, 0)
        XCTAssertEqual(scene.face.scale, 0.9)
        XCTAssertEqual(scene.heart.rate, 0.5)
        XCTAssertEqual(scene.heart.fillColor.hex, "#ff0000")
        XCTAssertEqual(scene.heart.strokeColor.hex, "#000000")
        XCTAssertEqual(scene.heart.lineWidth, 1)
        XCTAssertEqual(scene.dragon.x, 10)
        XCTAssertEqual(scene.dragon.y, 10)
        XCTAssertFalse(scene.dragon.hidden)
    }

    func testRuleDefaults() {
        let rules = SceneRules()
        XCTAssertEqual(rules.defaults, .standard)
        XCTAssertEqual(rules.geometry, SceneGeometry())
        XCTAssertEqual(rules.scaleMin, 0.1)
        XCTAssertEqual(rules.scaleMax, 2.0)
        XCTAssertEqual(SceneRules.happinessRange, 0...100)
        XCTAssertEqual(SceneRules.nudgeRange, -100...100)
        XCTAssertEqual(SceneRules.lineWidthRange, 0...20)
    }

    // MARK: smile

    func testSmileIsDerivedFromHappiness() {
        let expected: [(Int, Double)] = [(0, -1), (25, -0.5), (50, 0), (75, 0.5), (80, 0.6), (100, 1)]
        for (happiness, smile) in expected {
            XCTAssertEqual(Scene.Face(happiness: happiness, scale: 1).smile, smile, "happiness \(happiness)")
        }
    }

    func testSmileIsReportedAlongsideEveryHappinessChange() {
        let reducer = SceneReducer(rules: SceneRules())
        var scene = Scene.standard
        let outcome = reducer.apply(.nudgeHappiness(-50), to: &scene)
        XCTAssertEqual(outcome.changes, [
            SceneChange(path: .faceHappiness, from: .integer(50), to: .integer(0)),
            SceneChange(path: .faceSmile, from: .number(0), to: .number(-1)),
        ])
    }

    // MARK: changes

    func testChangesListEveryDifferentFieldInPathOrder() {
        let changes = Scene.standard.changes(to: modified())
        XCTAssertEqual(changes, [
            SceneChange(path: .faceHappiness, from: .integer(50), to: .integer(80)),
            SceneChange(path: .faceSmile, from: .number(0), to: .number(0.6)),
            SceneChange(path: .heartStrokeColor, from: .color(RGBColor(red: 0, green: 0, blue: 0)),
                        to: .color(RGBColor(red: 1, green: 2, blue: 3))),
            SceneChange(path: .dragonX, from: .number(10), to: .number(30)),
            SceneChange(path: .dragonHidden, from: .bool(false), to: .bool(true)),
        ])
        XCTAssertEqual(Scene.standard.changes(to: .standard), [])
    }

    func testValueAtEveryPath() {
        let scene = modified()
        XCTAssertEqual(scene.value(at: .faceHappiness), .integer(80))
        XCTAssertEqual(scene.value(at: .faceSmile), .number(0.6))
        XCTAssertEqual(scene.value(at: .faceScale), .number(0.9))
        XCTAssertEqual(scene.value(at: .heartRate), .number(0.5))
        XCTAssertEqual(scene.value(at: .heartFillColor), .color(RGBColor(red: 255, green: 0, blue: 0)))
        XCTAssertEqual(scene.value(at: .heartStrokeColor), .color(RGBColor(red: 1, green: 2, blue: 3)))
        XCTAssertEqual(scene.value(at: .heartLineWidth), .number(1))
        XCTAssertEqual(scene.value(at: .dragonX), .number(30))
        XCTAssertEqual(scene.value(at: .dragonY), .number(10))
        XCTAssertEqual(scene.value(at: .dragonHidden), .bool(true))
        XCTAssertEqual(ScenePath.allCases.map(\.rawValue), [
            "face.happiness", "face.smile", "face.scale", "heart.rate", "heart.fillColor",
            "heart.strokeColor", "heart.lineWidth", "dragon.x", "dragon.y", "dragon.hidden",
        ])
    }

    // MARK: room.reset

    func testResetRestoresTheDefaultsAndListsTheChanges() {
        let reducer = SceneReducer(rules: SceneRules())
        var scene = modified()
        let outcome = reducer.apply(.reset, to: &scene)
        XCTAssertEqual(scene, .standard)
        XCTAssertEqual(outcome.eventName, .didReset)
        XCTAssertEqual(outcome.result, .applied)
        XCTAssertEqual(outcome.changes, modified().changes(to: .standard))
        XCTAssertEqual(outcome.changes.map(\.path), [.faceHappiness, .faceSmile, .heartStrokeColor, .dragonX, .dragonHidden])
    }

    func testResetAtTheDefaultsIsUnchanged() {
        let reducer = SceneReducer(rules: SceneRules())
        var scene = Scene.standard
        XCTAssertEqual(reducer.apply(.reset, to: &scene), Outcome(eventName: nil, changes: [], result: .unchanged))
        XCTAssertEqual(scene, .standard)
    }

    func testResetUsesTheConfiguredDefaults() {
        var defaults = Scene.standard
        defaults.face.happiness = 10
        defaults.dragon.y = 40
        let reducer = SceneReducer(rules: SceneRules(defaults: defaults))
        var scene = Scene.standard
        let outcome = reducer.apply(.reset, to: &scene)
        XCTAssertEqual(scene, defaults)
        XCTAssertEqual(outcome.changes.map(\.path), [.faceHappiness, .faceSmile, .dragonY])
        XCTAssertEqual(reducer.apply(.reset, to: &scene).result, .unchanged)
    }

    // MARK: acks

    func testAckResultsMatchTheProtocol() {
        XCTAssertEqual(AckResult.allCases.map(\.rawValue), ["applied", "clamped", "unchanged", "blocked", "counted"],
                       "counted: a dragon vote (section 12)")
    }
}
