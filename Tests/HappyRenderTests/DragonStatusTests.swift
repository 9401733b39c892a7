import HappyCore
import HappyRender
import XCTest

/// The status label's text, and what each view's picture depends on.
final class DragonStatusTests: XCTestCase {
    private let dragon = Scene.Dragon(x: 20, y: 10, hidden: false)
    private let status = RenderFixtures.art.panel.status

    func testTextPerEvent() {
        XCTAssertEqual(status.initial, "dragon's status", "the art keeps the seed's text")
        XCTAssertEqual(DragonStatus().initial, "dragon's status")
        XCTAssertEqual(status.after(.forwardButtonClicked, dragon: dragon), "forward, (x,y) = (20, 10)")
        XCTAssertEqual(status.after(.backButtonClicked, dragon: Scene.Dragon(x: 10, y: 10, hidden: false)),
                       "back, (x,y) = (10, 10)")
        XCTAssertEqual(status.after(.backButtonClicked, dragon: Scene.Dragon(x: 12.5, y: 10, hidden: false)),
                       "back, (x,y) = (12.5, 10)")
        XCTAssertEqual(status.after(.didChangeHidden, dragon: Scene.Dragon(x: 10, y: 10, hidden: true)), "hide")
        XCTAssertEqual(status.after(.didChangeHidden, dragon: dragon), "show")
        XCTAssertEqual(status.after(.didReset, dragon: dragon), "dragon's status")
        XCTAssertNil(status.after(.didChangeHappiness, dragon: dragon))
        XCTAssertNil(status.after(.didChangeStyle, dragon: dragon))
    }

    private func event(_ name: String, x: Double = 10, hidden: Bool = false) -> [UInt8] {
        Array(##"{"type":"event","seq":1,"room":"lobby","time":0,"name":"\##(name)","sender":{"id":"c1","name":"a"},"changes":[],"state":{"face":{"happiness":50,"smile":0,"scale":0.9},"heart":{"rate":0.5,"fillColor":"#ff0000","strokeColor":"#000000","lineWidth":1},"dragon":{"x":\##(x),"y":10,"hidden":\##(hidden)}}}"##.utf8)
    }

    func testRecoveredFromTheNewestDragonEvent() {
        XCTAssertEqual(status.recover(from: [[UInt8]]()), "dragon's status")
        XCTAssertEqual(status.recover(from: [event("forwardButtonClicked:", x: 20),
                                                   event("faceView:didChangeHappiness:"),
                                                   event("heartView:didChangeRate:")]),
                       "forward, (x,y) = (20, 10)")
        XCTAssertEqual(status.recover(from: [event("forwardButtonClicked:", x: 20),
                                                   event("backButtonClicked:", x: 10)]),
                       "back, (x,y) = (10, 10)")
        XCTAssertEqual(status.recover(from: [event("forwardButtonClicked:", x: 20),
                                                   event("dragonView:didChangeHidden:", hidden: true)]), "hide")
        XCTAssertEqual(status.recover(from: [event("forwardButtonClicked:", x: 20), event("room:didReset:")]),
                       "dragon's status")
        XCTAssertEqual(status.recover(from: [event("forwardButtonClicked:", x: 30), Array("not json".utf8)]),
                       "forward, (x,y) = (30, 10)")
    }

    func testRelevantStateIgnoresWhatAViewDoesNotDraw() {
        let base = FrameState(scene: .standard, dragonStatus: status.initial, step: 3)
        var other = base
        other.scene.heart.rate = 0.9
        other.scene.dragon.x = 40
        other.dragonStatus = "forward, (x,y) = (40, 10)"
        other.step = 60
        XCTAssertEqual(base.relevant(to: .face), other.relevant(to: .face))
        XCTAssertNotEqual(base.relevant(to: .heart), other.relevant(to: .heart))
        XCTAssertNotEqual(base.relevant(to: .dragon), other.relevant(to: .dragon))

        var faceChanged = base
        faceChanged.scene.face.happiness = 70
        faceChanged.step = 99
        XCTAssertNotEqual(base.relevant(to: .face), faceChanged.relevant(to: .face))
        XCTAssertEqual(base.relevant(to: .dragon), faceChanged.relevant(to: .dragon))
        XCTAssertNotEqual(base.relevant(to: .heart), faceChanged.relevant(to: .heart), "the step moves the wave")

        var stepOnly = base
        stepOnly.step = 50
        XCTAssertEqual(base.relevant(to: .dragon), stepOnly.relevant(to: .dragon))
        XCTAssertNotEqual(base.relevant(to: .scene), stepOnly.relevant(to: .scene))
    }
}
