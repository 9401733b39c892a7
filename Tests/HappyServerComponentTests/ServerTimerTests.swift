import HappyCore
@testable import HappyServer
import XCTest

/// The server's timers on a manual clock: who arms which, when, and that a
/// fired timer's work runs at the end of the loop turn, as in the real loop.
final class ServerTimerTests: XCTestCase {
    private func pointer(_ x: Double) -> String {
        #"{"type":"pointer","view":"face","x":\#(x),"y":0.5}"#
    }

    /// Moves the clock by `seconds` and ends a loop turn (due timers run then).
    private func elapse(_ test: TestServer, _ seconds: Double) {
        test.advance(by: seconds)
        test.turn()
    }

    func testThePointerTimerIsArmedForTheIntervalAfterAMoveAndNeverEarly() {
        let test = TestServer(config: TestServer.config { $0.limits.pointerIntervalMs = 100 })
        let (alice, bob) = (test.joined(name: "alice"), test.joined(name: "bob"))
        _ = test.messages(of: bob)
        XCTAssertNil(test.timers.delay(of: .pointers), "nothing moved: no timer")
        test.send(alice, pointer(0.1))
        XCTAssertEqual(test.timers.delay(of: .pointers) ?? -1, 0, accuracy: 1e-9, "the first batch goes at once")
        test.turn()
        XCTAssertEqual(test.messages(of: bob).ofType("pointers").count, 1)

        test.send(alice, pointer(0.2))
        XCTAssertEqual(test.timers.delay(of: .pointers) ?? -1, 0.1, accuracy: 1e-9, "an interval after the last batch")
        elapse(test, 0.05)
        XCTAssertEqual(test.messages(of: bob).ofType("pointers").count, 0)
        elapse(test, 0.051)
        XCTAssertEqual(test.messages(of: bob).ofType("pointers").count, 1)
        XCTAssertNil(test.timers.delay(of: .pointers), "nothing changed since: the timer rests")
    }

    func testTheSweepComesEverySecondWhileARoomWaitsToLeaveMemory() {
        let test = TestServer()
        let client = test.joined()
        test.sweep()
        XCTAssertEqual(test.timers.delay(of: .sweep) ?? -1, test.server.registry.sweepInterval, accuracy: 1e-9,
                       "clients only: the keepalive interval")
        XCTAssertGreaterThan(test.server.registry.sweepInterval, 1)
        test.close(client)
        test.turn()
        XCTAssertEqual(test.timers.delay(of: .sweep) ?? -1, 1, accuracy: 1e-9, "an empty room leaves within a second of its time")
    }

    func testAnEmptyRoomLeavesMemoryOnTheSweepAfterItsIdleTime() {
        let test = TestServer()
        test.close(test.joined(room: "den"))
        test.turn()
        elapse(test, RoomDirectory.roomIdleSeconds - 0.5)
        XCTAssertNotNil(test.server.directory["den"], "not yet")
        for _ in 0..<2 { elapse(test, 1) }
        XCTAssertNil(test.server.directory["den"])
    }

    func testTheSweepPingsASilentClientWhenItsTimerFires() {
        let test = TestServer()
        let client = test.joined()
        test.sweep()
        let interval = test.server.registry.sweepInterval
        var waited = 0.0
        while waited < test.config.limits.pingIntervalSeconds + interval {
            elapse(test, interval)
            waited += interval
        }
        test.pump(client)
        XCTAssertEqual(client.transport.writes.last?.kind, .ping)
    }

    func testAFrameStreamArmsTheWaveTimerAtItsRate() throws {
        let test = TestServer()
        _ = test.begin("GET", "/stream/heart.png", query: ["w": "32", "h": "32", "fps": "20"])
        XCTAssertEqual(test.timers.delay(of: .streams) ?? -1, 0.05, accuracy: 1e-6)
        XCTAssertEqual(test.timers.delay(of: .sweep) ?? -1, 1, accuracy: 1e-9, "streams are swept every second")
        _ = test.begin("GET", "/stream/face.png")
        XCTAssertEqual(test.timers.delay(of: .streams) ?? -1, 0.05, accuracy: 1e-6, "a still view needs no wave")
    }

    func testAFiredTimersWorkIsWrittenWhenTheTurnEnds() {
        let test = TestServer(config: TestServer.config { $0.limits.pointerIntervalMs = 100 })
        let (alice, bob) = (test.joined(name: "alice"), test.joined(name: "bob"))
        _ = test.messages(of: bob)
        test.send(alice, pointer(0.3))
        XCTAssertEqual(bob.transport.textFrames.count, 1, "only the welcome: the batch waits for the turn's end")
        test.turn()
        XCTAssertEqual(test.messages(of: bob).ofType("pointers").count, 1)
    }
}
