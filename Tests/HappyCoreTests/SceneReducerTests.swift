import XCTest
import HappyCore

final class SceneReducerTests: XCTestCase {
    private let reducer = SceneReducer(rules: SceneRules())

    private func apply(_ action: Action, to start: Scene = .standard,
                       reducer: SceneReducer? = nil) -> (scene: Scene, outcome: Outcome) {
        var scene = start
        let outcome = (reducer ?? self.reducer).apply(action, to: &scene)
        return (scene, outcome)
    }

    private func scene(happiness: Int = 50, scale: Double = 0.9, rate: Double = 0.5, lineWidth: Double = 1) -> Scene {
        var scene = Scene.standard
        scene.face.happiness = happiness
        scene.face.scale = scale
        scene.heart.rate = rate
        scene.heart.lineWidth = lineWidth
        return scene
    }

    private func assertUnchanged(_ action: Action, on start: Scene = .standard,
                                 file: StaticString = #filePath, line: UInt = #line) {
        let (after, outcome) = apply(action, to: start)
        XCTAssertEqual(outcome, Outcome(eventName: nil, changes: [], result: .unchanged), file: file, line: line)
        XCTAssertEqual(after, start, file: file, line: line)
    }

    // MARK: actions built in code, past what the decoder lets through

    func testValuesThatAreNoNumbersChangeNothing() {
        for value in [Double.nan, .infinity, -.infinity] {
            for action in [Action.setHappiness(value), .setScale(value), .pinch(value), .setRate(value)] {
                assertUnchanged(action)
            }
        }
    }

    func testAnyNudgeClampsWithoutOverflowing() {
        XCTAssertEqual(apply(.nudgeHappiness(.max)).scene.face.happiness, 100)
        XCTAssertEqual(apply(.nudgeHappiness(.min)).scene.face.happiness, 0)
        XCTAssertEqual(apply(.nudgeHappiness(.max)).outcome.result, .clamped)
    }

    // MARK: face.setHappiness

    func testSetHappinessInRangeChangesHappinessAndSmile() {
        let (after, outcome) = apply(.setHappiness(80))
        XCTAssertEqual(after.face.happiness, 80)
        XCTAssertEqual(after.face.smile, 0.6)
        XCTAssertEqual(outcome.result, .applied)
        XCTAssertEqual(outcome.eventName, .didChangeHappiness)
        XCTAssertEqual(outcome.changes, [
            SceneChange(path: .faceHappiness, from: .integer(50), to: .integer(80)),
            SceneChange(path: .faceSmile, from: .number(0), to: .number(0.6)),
        ])
    }

    func testSetHappinessAboveRangeIsClampedTo100() {
        let (after, outcome) = apply(.setHappiness(150))
        XCTAssertEqual(after.face.happiness, 100)
        XCTAssertEqual(outcome.result, .clamped)
        XCTAssertEqual(outcome.changes, [
            SceneChange(path: .faceHappiness, from: .integer(50), to: .integer(100)),
            SceneChange(path: .faceSmile, from: .number(0), to: .number(1)),
        ])
    }

    func testSetHappinessBelowRangeIsClampedTo0() {
        let (after, outcome) = apply(.setHappiness(-1e12))
        XCTAssertEqual(after.face.happiness, 0)
        XCTAssertEqual(after.face.smile, -1)
        XCTAssertEqual(outcome.result, .clamped)
        XCTAssertEqual(outcome.eventName, .didChangeHappiness)
    }

    func testSetHappinessEqualAfterClampIsUnchanged() {
        assertUnchanged(.setHappiness(150), on: scene(happiness: 100))
        assertUnchanged(.setHappiness(-3), on: scene(happiness: 0))
        assertUnchanged(.setHappiness(50))
    }

    func testSetHappinessAtTheBoundsIsAppliedNotClamped() {
        XCTAssertEqual(apply(.setHappiness(100)).outcome.result, .applied)
        XCTAssertEqual(apply(.setHappiness(0)).outcome.result, .applied)
    }

    // MARK: face.nudgeHappiness

    func testNudgeHappinessUpAndDown() {
        let up = apply(.nudgeHappiness(20))
        XCTAssertEqual(up.scene.face.happiness, 70)
        XCTAssertEqual(up.outcome.result, .applied)
        XCTAssertEqual(up.outcome.eventName, .didChangeHappiness)
        let down = apply(.nudgeHappiness(-25))
        XCTAssertEqual(down.scene.face.happiness, 25)
        XCTAssertEqual(down.scene.face.smile, -0.5)
        XCTAssertEqual(down.outcome.changes.map(\.path), [.faceHappiness, .faceSmile])
    }

    func testNudgeHappinessIsClampedAtBothEnds() {
        let high = apply(.nudgeHappiness(100), to: scene(happiness: 90))
        XCTAssertEqual(high.scene.face.happiness, 100)
        XCTAssertEqual(high.outcome.result, .clamped)
        let low = apply(.nudgeHappiness(-100), to: scene(happiness: 10))
        XCTAssertEqual(low.scene.face.happiness, 0)
        XCTAssertEqual(low.outcome.result, .clamped)
    }

    func testNudgeHappinessThatChangesNothingIsUnchanged() {
        assertUnchanged(.nudgeHappiness(0))
        assertUnchanged(.nudgeHappiness(10), on: scene(happiness: 100))
        assertUnchanged(.nudgeHappiness(-10), on: scene(happiness: 0))
    }

    // MARK: face.setScale and face.pinch

    func testSetScaleInRange() {
        let (after, outcome) = apply(.setScale(1.5))
        XCTAssertEqual(after.face.scale, 1.5)
        XCTAssertEqual(outcome.result, .applied)
        XCTAssertEqual(outcome.eventName, .didChangeScale)
        XCTAssertEqual(outcome.changes, [SceneChange(path: .faceScale, from: .number(0.9), to: .number(1.5))])
    }

    func testSetScaleIsClampedToScaleMinAndScaleMax() {
        let high = apply(.setScale(5))
        XCTAssertEqual(high.scene.face.scale, 2.0)
        XCTAssertEqual(high.outcome.result, .clamped)
        let low = apply(.setScale(0.01))
        XCTAssertEqual(low.scene.face.scale, 0.1)
        XCTAssertEqual(low.outcome.result, .clamped)
        assertUnchanged(.setScale(9), on: scene(scale: 2.0))
    }

    func testSetScaleUsesTheConfiguredRange() {
        let narrow = SceneReducer(rules: SceneRules(scaleMin: 0.5, scaleMax: 1.0))
        XCTAssertEqual(apply(.setScale(0.2), reducer: narrow).scene.face.scale, 0.5)
        XCTAssertEqual(apply(.setScale(1.2), reducer: narrow).scene.face.scale, 1.0)
        XCTAssertEqual(apply(.setScale(0.75), reducer: narrow).outcome.result, .applied)
    }

    func testPinchMultipliesTheScale() {
        let (after, outcome) = apply(.pinch(2))
        XCTAssertEqual(after.face.scale, 1.8)
        XCTAssertEqual(outcome.result, .applied)
        XCTAssertEqual(outcome.eventName, .didChangeScale)
        XCTAssertEqual(outcome.changes, [SceneChange(path: .faceScale, from: .number(0.9), to: .number(1.8))])
    }

    func testPinchIsClamped() {
        let grow = apply(.pinch(3))
        XCTAssertEqual(grow.scene.face.scale, 2.0)
        XCTAssertEqual(grow.outcome.result, .clamped)
        let shrink = apply(.pinch(0.01))
        XCTAssertEqual(shrink.scene.face.scale, 0.1)
        XCTAssertEqual(shrink.outcome.result, .clamped)
        let overflow = apply(.pinch(.greatestFiniteMagnitude), to: scene(scale: 2.0))
        XCTAssertEqual(overflow.outcome.result, .unchanged)
        XCTAssertEqual(overflow.scene.face.scale, 2.0)
    }

    func testPinchByOneIsUnchanged() {
        assertUnchanged(.pinch(1))
        assertUnchanged(.pinch(0.5), on: scene(scale: 0.1))
    }

    // MARK: heart.setRate

    func testSetRateInRangeAndClamped() {
        let mid = apply(.setRate(0.75))
        XCTAssertEqual(mid.scene.heart.rate, 0.75)
        XCTAssertEqual(mid.outcome.result, .applied)
        XCTAssertEqual(mid.outcome.eventName, .didChangeRate)
        XCTAssertEqual(mid.outcome.changes, [SceneChange(path: .heartRate, from: .number(0.5), to: .number(0.75))])
        let high = apply(.setRate(1.5))
        XCTAssertEqual(high.scene.heart.rate, 1)
        XCTAssertEqual(high.outcome.result, .clamped)
        let low = apply(.setRate(-0.5))
        XCTAssertEqual(low.scene.heart.rate, 0)
        XCTAssertEqual(low.outcome.result, .clamped)
    }

    func testSetRateThatChangesNothingIsUnchanged() {
        assertUnchanged(.setRate(0.5))
        assertUnchanged(.setRate(7), on: scene(rate: 1))
    }

    // MARK: heart.setStyle

    func testSetStyleChangesOnlyTheGivenFields() {
        let green = RGBColor(red: 0, green: 255, blue: 0)
        let (after, outcome) = apply(.setStyle(HeartStyle(fillColor: green)))
        XCTAssertEqual(after.heart.fillColor, green)
        XCTAssertEqual(after.heart.strokeColor, Scene.standard.heart.strokeColor)
        XCTAssertEqual(after.heart.lineWidth, 1)
        XCTAssertEqual(outcome.result, .applied)
        XCTAssertEqual(outcome.eventName, .didChangeStyle)
        XCTAssertEqual(outcome.changes, [
            SceneChange(path: .heartFillColor, from: .color(RGBColor(red: 255, green: 0, blue: 0)), to: .color(green)),
        ])
    }

    func testSetStyleWithEveryFieldListsChangesInPathOrder() {
        let style = HeartStyle(fillColor: RGBColor(hex: "#ABC"), strokeColor: RGBColor(hex: "#123456"), lineWidth: 4)
        let (after, outcome) = apply(.setStyle(style))
        XCTAssertEqual(after.heart.fillColor.hex, "#aabbcc")
        XCTAssertEqual(after.heart.strokeColor.hex, "#123456")
        XCTAssertEqual(after.heart.lineWidth, 4)
        XCTAssertEqual(outcome.changes.map(\.path), [.heartFillColor, .heartStrokeColor, .heartLineWidth])
        XCTAssertEqual(outcome.changes.last?.from, .number(1))
    }

    func testLineWidthZeroIsStoredAsOne() {
        let (after, outcome) = apply(.setStyle(HeartStyle(lineWidth: 0)), to: scene(lineWidth: 5))
        XCTAssertEqual(after.heart.lineWidth, 1)
        XCTAssertEqual(outcome.result, .applied)
        XCTAssertEqual(outcome.changes, [SceneChange(path: .heartLineWidth, from: .number(5), to: .number(1))])
        assertUnchanged(.setStyle(HeartStyle(lineWidth: 0)))
    }

    func testSetStyleThatChangesNothingIsUnchanged() {
        let current = Scene.standard.heart
        assertUnchanged(.setStyle(HeartStyle(fillColor: current.fillColor, strokeColor: current.strokeColor, lineWidth: 1)))
        assertUnchanged(.setStyle(HeartStyle()))
    }
}
