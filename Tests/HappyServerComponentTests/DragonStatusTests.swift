import HappyCore
import HappyRender
@testable import HappyServer
import XCTest

/// The dragon panel's label (HappyCore `DragonStatus`) follows a room's
/// dragon events, and is recovered from the store's history on load.
final class DragonStatusTests: XCTestCase {
    func testLabelFollowsTheDragonEvents() {
        let test = TestServer()
        let client = test.joined()
        let runtime = test.server.directory["lobby"]!
        XCTAssertEqual(runtime.room?.dragonStatus, DragonStatus.seedInitial)

        test.sendIntent(client, "dragon.forward")
        XCTAssertEqual(runtime.room?.dragonStatus, "forward, (x,y) = (20, 10)")
        test.sendIntent(client, "dragon.forward")
        test.sendIntent(client, "dragon.back")
        XCTAssertEqual(runtime.room?.dragonStatus, "back, (x,y) = (20, 10)")
        test.sendIntent(client, "dragon.toggleHidden")
        XCTAssertEqual(runtime.room?.dragonStatus, "hide")
        test.sendIntent(client, "face.setHappiness", #""value":10"#)
        XCTAssertEqual(runtime.room?.dragonStatus, "hide", "other events leave the label")
        test.sendIntent(client, "room.reset")
        XCTAssertEqual(runtime.room?.dragonStatus, DragonStatus.seedInitial)
        XCTAssertEqual(test.types(of: client).filter { $0 == "ack" }.count, 6)
    }

    func testLabelStartsFromTheArtsInitialText() throws {
        let test = TestServer()
        let art = try SceneArt.load(path: TestServer.webRoot + "/" + FrameService.artPath)
        _ = test.joined(room: "art")
        XCTAssertEqual(test.server.directory["art"]?.room?.dragonStatus, art.panel.status.initial)
    }

    func testLabelIsRecoveredFromTheStoredHistory() {
        let store = ScriptedStore(synchronous: true, keepsHistory: true)
        let first = TestServer(store: store)
        let client = first.joined(room: "cave")
        first.sendIntent(client, "dragon.forward")
        first.sendIntent(client, "face.setHappiness", #""value":80"#)
        XCTAssertEqual(store.stored("cave")?.history.count, 2)

        // Another server over the same store reads the room back.
        let second = TestServer(store: store)
        _ = second.joined(room: "cave")
        XCTAssertEqual(second.server.directory["cave"]?.room?.dragonStatus, "forward, (x,y) = (20, 10)")
        XCTAssertEqual(second.server.directory["cave"]?.room?.committed.seq, 2)
    }
}
