import Foundation
import HappyClientKit
import XCTest

/// What an app does with its room when it leaves and comes back, and calls
/// on the main actor for UI code. UIKit's own notifications are not here;
/// `follow` is the same code with names of the test's.
final class AppLifecycleTests: XCTestCase {
    func testARoomFollowingTheLifecycleSuspendsAndResumesWithTheEventsOfThePause() async throws {
        let scripted = ScriptedRoom()
        defer { scripted.leave() }
        let center = NotificationCenter()
        let background = Notification.Name("test.background"), foreground = Notification.Name("test.foreground")
        let observation = scripted.room.follow(suspendOn: background, resumeOn: foreground, center: center)
        let first = try await scripted.join(seq: 1)

        center.post(name: background, object: nil)
        XCTAssertEqual(scripted.room.snapshot.connectionState, .suspended)
        XCTAssertEqual(first.clientClose?.code, 1000)
        center.post(name: foreground, object: nil)
        let second = try await scripted.accept(seq: 3, recovered: true)
        for seq: UInt64 in 2...3 { second.send(SessionFixtures.eventText(seq: seq, happiness: Int(seq))) }
        let seqs = await eventually { scripted.eventSeqs.count == 2 ? scripted.eventSeqs : nil }
        XCTAssertEqual(seqs, [2, 3])
        XCTAssertEqual(second.query["since"], "1")

        observation.cancel()
        center.post(name: background, object: nil)
        XCTAssertEqual(scripted.room.snapshot.connectionState, .connected, "no longer following")
    }

    /// A controller as a UIKit one would be: it may touch its views only on the main thread.
    private final class MainThreadController: FaceViewDelegate, @unchecked Sendable {
        let lock = NSLock()
        var calls: [(happiness: Int, onMain: Bool)] = []

        func faceView(_ faceView: FaceView, didChangeHappiness happiness: Int) {
            lock.withLock { calls.append((happiness, Thread.isMainThread)) }
        }
    }

    func testDeliveryOnTheMainActorCallsTheSeedViewsDelegatesOnTheMainThread() async throws {
        let scripted = ScriptedRoom(deliversOnMainActor: true)
        defer { scripted.leave() }
        let server = try await scripted.join(seq: 0)
        let views = SeedViews(room: scripted.room)
        defer { views.detach() }
        let controller = MainThreadController()
        views.face.delegate = controller
        for seq: UInt64 in 1...3 { server.send(SessionFixtures.eventText(seq: seq, happiness: 60 + Int(seq))) }
        let calls = await eventually { controller.lock.withLock { controller.calls.count == 3 ? controller.calls : nil } }
        XCTAssertEqual(calls?.map(\.happiness), [61, 62, 63], "in the room's order")
        XCTAssertEqual(calls?.map(\.onMain), [true, true, true])
        XCTAssertEqual(views.face.happiness, 63)
    }
}
