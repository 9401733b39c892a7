import XCTest
import HappyCore

final class DragonRulesTests: XCTestCase {
    private let reducer = SceneReducer(rules: SceneRules())

    private func scene(x: Double, hidden: Bool = false) -> Scene {
        var scene = Scene.standard
        scene.dragon.x = x
        scene.dragon.hidden = hidden
        return scene
    }

    private func press(_ action: Action, at x: Double, reducer: SceneReducer? = nil) -> (scene: Scene, outcome: Outcome) {
        var scene = scene(x: x)
        let outcome = (reducer ?? self.reducer).apply(action, to: &scene)
        return (scene, outcome)
    }

    // MARK: forward

    func testForwardMovesOneStep() {
        let (after, outcome) = press(.dragonForward, at: 10)
        XCTAssertEqual(after.dragon.x, 20)
        XCTAssertEqual(after.dragon.y, 10)
        XCTAssertEqual(outcome, Outcome(eventName: .forwardButtonClicked,
                                        changes: [SceneChange(path: .dragonX, from: .number(10), to: .number(20))],
                                        result: .applied))
    }

    func testForwardStopsAt270WithTheDefaults() {
        var scene = Scene.standard
        let results = (0..<30).map { _ in reducer.apply(.dragonForward, to: &scene).result }
        XCTAssertEqual(Array(results.prefix(26)), Array(repeating: AckResult.applied, count: 26))
        XCTAssertEqual(Array(results.dropFirst(26)), Array(repeating: AckResult.blocked, count: 4))
        XCTAssertEqual(scene.dragon.x, 270)
    }

    func testForwardAtTheEdgeIsBlockedButStillNamed() {
        let (after, outcome) = press(.dragonForward, at: 270)
        XCTAssertEqual(after.dragon.x, 270)
        XCTAssertEqual(outcome, Outcome(eventName: .forwardButtonClicked, changes: [], result: .blocked))
    }

    func testForwardNeedsTheTargetStrictlyBelowWidthMinusDragonSize() {
        XCTAssertEqual(press(.dragonForward, at: 264).scene.dragon.x, 274)
        XCTAssertEqual(press(.dragonForward, at: 265).outcome.result, .blocked)
        XCTAssertEqual(press(.dragonForward, at: 265).scene.dragon.x, 265)
    }

    // MARK: back

    func testBackFromTheDefaultPositionIsBlocked() {
        let (after, outcome) = press(.dragonBack, at: Scene.standard.dragon.x)
        XCTAssertEqual(after, Scene.standard)
        XCTAssertEqual(outcome, Outcome(eventName: .backButtonClicked, changes: [], result: .blocked))
    }

    func testBackMovesOneStep() {
        let (after, outcome) = press(.dragonBack, at: 270)
        XCTAssertEqual(after.dragon.x, 260)
        XCTAssertEqual(outcome, Outcome(eventName: .backButtonClicked,
                                        changes: [SceneChange(path: .dragonX, from: .number(270), to: .number(260))],
                                        result: .applied))
    }

    func testBackNeedsTheTargetStrictlyAboveZero() {
        XCTAssertEqual(press(.dragonBack, at: 11).scene.dragon.x, 1)
        XCTAssertEqual(press(.dragonBack, at: 11).outcome.result, .applied)
        XCTAssertEqual(press(.dragonBack, at: 10).outcome.result, .blocked)
        XCTAssertEqual(press(.dragonBack, at: 5).scene.dragon.x, 5)
    }

    func testForwardThenBackReturnsToTheStart() {
        var scene = Scene.standard
        _ = reducer.apply(.dragonForward, to: &scene)
        _ = reducer.apply(.dragonForward, to: &scene)
        _ = reducer.apply(.dragonBack, to: &scene)
        XCTAssertEqual(scene.dragon.x, 20)
        _ = reducer.apply(.dragonBack, to: &scene)
        XCTAssertEqual(scene, Scene.standard)
    }

    // MARK: geometry

    func testCustomGeometryDrivesTheEdges() {
        let geometry = SceneGeometry(width: 200, height: 100, dragonSize: 50, step: 25)
        let custom = SceneReducer(rules: SceneRules(geometry: geometry))
        XCTAssertEqual(press(.dragonForward, at: 100, reducer: custom).scene.dragon.x, 125)
        XCTAssertEqual(press(.dragonForward, at: 125, reducer: custom).outcome.result, .blocked)
        XCTAssertEqual(press(.dragonBack, at: 26, reducer: custom).scene.dragon.x, 1)
        XCTAssertEqual(press(.dragonBack, at: 25, reducer: custom).outcome.result, .blocked)
    }

    func testGeometryDefaults() {
        let geometry = SceneGeometry()
        XCTAssertEqual(geometry.width, 375)
        XCTAssertEqual(geometry.height, 180)
        XCTAssertEqual(geometry.dragonSize, 100)
        XCTAssertEqual(geometry.step, 10)
    }

    func testMovingWhileHiddenIsAllowed() {
        var scene = scene(x: 10, hidden: true)
        XCTAssertEqual(reducer.apply(.dragonForward, to: &scene).result, .applied)
        XCTAssertEqual(scene.dragon.x, 20)
        XCTAssertTrue(scene.dragon.hidden)
    }

    // MARK: hidden

    func testSetHiddenChangesTheFlag() {
        let (after, outcome) = press(.setHidden(true), at: 10)
        XCTAssertTrue(after.dragon.hidden)
        XCTAssertEqual(outcome, Outcome(eventName: .didChangeHidden,
                                        changes: [SceneChange(path: .dragonHidden, from: .bool(false), to: .bool(true))],
                                        result: .applied))
    }

    func testSetHiddenToTheSameValueIsUnchangedWithoutEvent() {
        let shown = press(.setHidden(false), at: 10)
        XCTAssertEqual(shown.outcome, Outcome(eventName: nil, changes: [], result: .unchanged))
        var hidden = scene(x: 10, hidden: true)
        XCTAssertEqual(reducer.apply(.setHidden(true), to: &hidden),
                       Outcome(eventName: nil, changes: [], result: .unchanged))
        XCTAssertTrue(hidden.dragon.hidden)
    }

    func testToggleHiddenFlipsBothWays() {
        var scene = Scene.standard
        let first = reducer.apply(.toggleHidden, to: &scene)
        XCTAssertTrue(scene.dragon.hidden)
        XCTAssertEqual(first, Outcome(eventName: .didChangeHidden,
                                      changes: [SceneChange(path: .dragonHidden, from: .bool(false), to: .bool(true))],
                                      result: .applied))
        let second = reducer.apply(.toggleHidden, to: &scene)
        XCTAssertFalse(scene.dragon.hidden)
        XCTAssertEqual(second.changes, [SceneChange(path: .dragonHidden, from: .bool(true), to: .bool(false))])
        XCTAssertEqual(scene, Scene.standard)
    }
}
