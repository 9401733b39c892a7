import Foundation
import HappyClientKit
import Synchronization
import XCTest

/// HappyClientKit's async API against a real server: events in order and
/// typed, `perform`'s typed outcome and errors, cancellation, reconnect and
/// resume, ticks, and the seeds' delegates driven by another client.
final class HappyRoomTests: XCTestCase {
    private var url: (ServerProcess) -> String = { "ws://127.0.0.1:\($0.port)" }

    /// The first `count` elements of `sequence` that `keep` selects, or those that came within `timeout` seconds.
    private func first<Element: Sendable>(_ count: Int, of sequence: AsyncStream<Element>, timeout: Double = 10,
                                          keep: @escaping @Sendable (Element) -> Bool = { _ in true }) async -> [Element] {
        await collect(sequence, timeout: timeout, keep: keep) { $0.count >= count }
    }

    /// The elements of `sequence` that `keep` selects until `enough` says so, or those that came within `timeout` seconds.
    private func collect<Element: Sendable>(_ sequence: AsyncStream<Element>, timeout: Double = 10,
                                            keep: @escaping @Sendable (Element) -> Bool = { _ in true },
                                            until enough: @escaping @Sendable ([Element]) -> Bool) async -> [Element] {
        let found = Mutex<[Element]>([])
        let reader = Task {
            for await element in sequence where keep(element) {
                if found.withLock({ $0.append(element); return enough($0) }) { break }
            }
        }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !found.withLock({ enough($0) }) && Date() < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        reader.cancel()
        return found.withLock { $0 }
    }

    private static func isEvent(_ update: RoomUpdate) -> Bool {
        if case .event = update { return true }
        return false
    }

    func testEventsArriveInOrderTypedWithTheirSenderAndChanges() async throws {
        let server = try ServerProcess()
        let room = try await HappyRoom.connect(to: url(server), room: "typed", name: "alice")
        defer { room.leave() }
        let events = room.events
        let (bob, _) = try TestClient.join(server, room: "typed", name: "bob")
        bob.intent("dragon.forward", id: "1")
        bob.intent("face.setHappiness", id: "2", ["value": 80])
        bob.intent("heart.setRate", id: "3", ["value": 0.25])
        let updates = await first(3, of: events, keep: { Self.isEvent($0) })
        let received = updates.compactMap { update -> HappyEvent? in
            if case .event(let event) = update { return event }
            return nil
        }
        XCTAssertEqual(received.map(\.seq), [1, 2, 3])
        XCTAssertEqual(received.map(\.name), [.forwardButtonClicked, .didChangeHappiness, .didChangeRate])
        XCTAssertEqual(received.map(\.delegateName), ["forwardButtonClicked:", "faceView:didChangeHappiness:",
                                                        "heartView:didChangeRate:"])
        XCTAssertEqual(received.first?.sender?.name, "bob")
        XCTAssertEqual(received.first?.changes, [SceneChange(path: .dragonX, from: .number(10), to: .number(20))])
        XCTAssertEqual(received.last?.state.heart.rate, 0.25)
        XCTAssertEqual(room.currentState?.face.happiness, 80)
    }

    /// `wire` hears everything in order with the message as sent: the welcome,
    /// a join, an event (its JSON as the server wrote it); it ends when the room is left.
    func testTheWireCarriesEachMessageAsSentInOrder() async throws {
        let server = try ServerProcess()
        let room = HappyRoom(configuration: SessionConfiguration(server: try WebSocketURL(validating: url(server)),
                                                                 room: "wire", name: "alice"),
                             loop: try ClientLoop(name: "wire-test"))
        let wire = room.wire
        try await room.join()
        let (bob, _) = try TestClient.join(server, room: "wire", name: "bob")
        bob.intent("dragon.forward", id: "1")
        let records = await first(3, of: wire, keep: {
            switch $0 {
            case .status, .pointers: return false
            default: return true
            }
        })
        guard records.count == 3, case .joined(let welcome, .fresh) = records[0],
              case .presence(.joined(let who), _) = records[1], case .event(let event, let text) = records[2] else {
            return XCTFail("\(records)")
        }
        XCTAssertEqual(welcome.room, "wire")
        XCTAssertEqual(who.name, "bob")
        XCTAssertEqual(event.seq, 1)
        let json = try JSONParser.parse(Array(text.utf8))
        XCTAssertEqual(json["type"]?.stringValue, "event")
        XCTAssertEqual(json["name"]?.stringValue, "forwardButtonClicked:")
        let later = room.wire
        let ended = Mutex(false)
        let reader = Task {
            for await _ in later {}
            ended.withLock { $0 = true }
        }
        room.leave()
        let deadline = Date(timeIntervalSinceNow: 5)
        while !ended.withLock({ $0 }) && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        XCTAssertTrue(ended.withLock { $0 }, "leaving ends the sequence")
        reader.cancel()
    }

    func testPerformAnswersWithTheTypedOutcomeOrTheServersError() async throws {
        let server = try ServerProcess()
        let room = try await HappyRoom.connect(to: url(server), room: "outcomes", name: "alice")
        defer { room.leave() }
        let forward = try await room.perform(.dragonForward)
        XCTAssertEqual(forward.result, .applied)
        XCTAssertEqual(forward.seq, 1)
        XCTAssertEqual(forward.state.dragon.x, 20)
        let clamped = try await room.perform(.setHappiness(500))
        XCTAssertEqual(clamped.result, .clamped)
        XCTAssertEqual(clamped.state.face.happiness, 100)
        let unchanged = try await room.perform(.setHappiness(100))
        XCTAssertEqual(unchanged.result, .unchanged)
        _ = try await room.perform(.dragonBack)
        let blocked = try await room.perform(.dragonBack)
        XCTAssertEqual(blocked.result, .blocked, "the dragon at the scene's edge")

        let watcher = try await HappyRoom.connect(to: url(server), room: "outcomes", name: "dash", observe: true)
        defer { watcher.leave() }
        do {
            _ = try await watcher.perform(.dragonForward)
            XCTFail("an observer's intent was accepted")
        } catch {
            guard case .refused(let refusal) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(refusal.code, .forbidden)
        }
    }

    func testABadAddressThrowsInsteadOfCrashing() async throws {
        for address in ["localhost:8080", "ws://", "ws://host:99999", ""] {
            do {
                _ = try await HappyRoom.connect(to: address)
                XCTFail("\(address) was accepted")
            } catch {
                guard case .invalidURL = error else { return XCTFail("\(address): \(error)") }
                XCTAssertTrue(error.description.contains("ws://host:port"), error.description)
            }
        }
    }

    func testCancellingEndsASequenceAndAWaitingPerform() async throws {
        let server = try ServerProcess()
        let proxy = try TCPProxy(targetPort: server.port)
        let room = try await HappyRoom.connect(to: "ws://127.0.0.1:\(proxy.port)", room: "cancel", name: "alice",
                                               reconnects: false)
        defer { room.leave() }
        let reader = Task {
            var count = 0
            for await _ in room.events { count += 1 }
            return count
        }
        reader.cancel()
        let count = await reader.value
        XCTAssertEqual(count, 0, "the loop ended at the cancellation")

        proxy.blackhole()  // the intent goes out and nothing comes back
        let started = Date()
        let pending = Task { try await room.perform(.dragonForward, timeout: 30) }
        try await Task.sleep(for: .milliseconds(200))
        pending.cancel()
        let result = await pending.result
        guard case .failure(let error) = result, case .cancelled? = error as? SessionError else {
            return XCTFail("\(result)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "answered at the cancellation, not the timeout")

        let timedOut = await Task { try await room.perform(.dragonBack, timeout: 0.5) }.result
        guard case .failure(let error) = timedOut, case .timeout(let what)? = error as? SessionError else {
            return XCTFail("\(timedOut)")
        }
        XCTAssertTrue(what.contains("dragon.back"), what)
    }

    func testItReconnectsAndResumesWithEveryEventOnce() async throws {
        let port = LoopbackPort.free()
        let server = try ServerProcess(["port": port])
        let room = try await HappyRoom.connect(to: "ws://127.0.0.1:\(port)", room: "resume", name: "alice")
        defer { room.leave() }
        let events = room.events
        let statuses = room.status
        try await room.perform(.dragonForward)
        server.kill()
        try server.start()
        let (bob, _) = try TestClient.join(server, room: "resume", name: "bob")
        for value in [60, 70, 80] { bob.intent("face.setHappiness", ["value": value]) }
        let updates = await first(4, of: events, timeout: 20, keep: { Self.isEvent($0) })
        XCTAssertEqual(updates.compactMap(\.seq), [1, 2, 3, 4], "the first from before the restart, then the others once")
        let seen = await first(3, of: statuses, timeout: 5)
        XCTAssertTrue(seen.contains { if case .waiting = $0 { return true } else { return false } }, "\(seen)")
        XCTAssertTrue(seen.contains(.connected), "\(seen)")
        XCTAssertEqual(room.snapshot.ledger.deliveredSeq, 4)
    }

    func testATickRoomYieldsTypedTicks() async throws {
        let server = try ServerProcess(["crowd": ["mode": "tick"]])
        let room = try await HappyRoom.connect(to: url(server), room: "ticks", name: "alice")
        defer { room.leave() }
        XCTAssertEqual(room.snapshot.ledger.delivery, .tick)
        let events = room.events
        let (bob, _) = try TestClient.join(server, room: "ticks", name: "bob")
        for _ in 0..<3 { bob.intent("dragon.forward") }
        let ticks = await collect(events, timeout: 10) { update in
            if case .tick(let tick) = update { return tick.eventCount > 0 }
            return false
        } until: { $0.last?.seq == 3 }.compactMap { update -> HappyTick? in
            if case .tick(let tick) = update { return tick }
            return nil
        }
        XCTAssertFalse(ticks.isEmpty)
        let forwards = ticks.flatMap(\.names).filter { $0.name == .forwardButtonClicked }.map(\.count).reduce(0, +)
        XCTAssertEqual(forwards, 3, "three presses over the ticks")
        XCTAssertEqual(ticks.last?.seq, 3)
        XCTAssertEqual(ticks.last?.state.dragon.x, 40)
        XCTAssertEqual(ticks.first?.senders.first?.name, "bob")
    }

    /// A controller as in the seeds, in-process: the room drives it.
    private final class Controller: FaceViewDataSource, FaceViewDelegate, DragonViewDelegate, HeartViewDelegate,
                                    @unchecked Sendable {
        let lock = NSLock()
        var happiness = 50
        var labels: [String] = []
        var rates: [Double] = []

        func smile(for faceView: FaceView) -> Double { lock.withLock { Double(happiness - 50) / 50 } }

        func faceView(_ faceView: FaceView, didChangeHappiness happiness: Int) {
            lock.withLock { self.happiness = happiness }
            faceView.setNeedsDisplay()
        }

        func forwardButtonClicked(_ dragonView: DragonView) {
            let (x, y) = dragonView.origin
            lock.withLock { labels.append("\(dragonView.sender?.name ?? "?"): forward, (x,y) = (\(Int(x)), \(Int(y)))") }
        }

        func backButtonClicked(_ dragonView: DragonView) {
            let (x, y) = dragonView.origin
            lock.withLock { labels.append("\(dragonView.sender?.name ?? "?"): back, (x,y) = (\(Int(x)), \(Int(y)))") }
        }

        func heartView(_ heartView: HeartView, didChangeRate rate: Double) { lock.withLock { rates.append(rate) } }
    }

    func testTheSeedsDelegatesAreDrivenByAnotherClient() async throws {
        let server = try ServerProcess()
        let room = try await HappyRoom.connect(to: url(server), room: "seeds", name: "controller")
        defer { room.leave() }
        let views = SeedViews(room: room)
        defer { views.detach() }
        let controller = Controller()
        views.face.dataSource = controller
        views.face.delegate = controller
        views.dragon.delegate = controller
        views.heart.delegate = controller

        let (bob, _) = try TestClient.join(server, room: "seeds", name: "bob")
        bob.intent("dragon.forward")
        bob.intent("face.setHappiness", ["value": 80])
        bob.intent("heart.setRate", ["value": 0.3])
        bob.intent("dragon.back")
        _ = try eventually(seconds: 10) { controller.lock.withLock { controller.labels.count >= 2 } ? true : nil }
        _ = try eventually(seconds: 10) { views.face.smile != nil ? true : nil }
        XCTAssertEqual(controller.lock.withLock { controller.labels },
                       ["bob: forward, (x,y) = (20, 10)", "bob: back, (x,y) = (10, 10)"])
        XCTAssertEqual(views.face.smile ?? 0, 0.6, accuracy: 1e-9, "the view drew the data source's smile")
        XCTAssertEqual(views.face.happiness, 80)
        XCTAssertEqual(controller.lock.withLock { controller.rates }, [0.3])
        XCTAssertEqual(views.dragon.sender?.name, "bob")

        // The controller's own button press reaches everyone, itself included.
        let outcome = try await views.dragon.forwardButtonClicked()
        XCTAssertEqual(outcome.result, .applied)
        _ = try eventually(seconds: 10) { controller.lock.withLock { controller.labels.count >= 3 } ? true : nil }
        XCTAssertEqual(controller.lock.withLock { controller.labels.last }, "controller: forward, (x,y) = (20, 10)")
    }

    // MARK: the examples

    func testTheSeedControllerExampleIsDrivenByTheRoom() throws {
        let server = try ServerProcess()
        let example = try ClientProcess(["--url", url(server), "--room", "example", "--events", "3"],
                                        binary: ClientProcess.built("SeedController"))
        XCTAssertTrue(example.waitForOutput { out, _ in out.contains("joined controller in example") }, example.stderr)
        let (bob, _) = try TestClient.join(server, room: "example", name: "bob")
        bob.intent("face.setHappiness", ["value": 90])
        bob.intent("dragon.forward")
        bob.intent("heart.setRate", ["value": 0.75])
        let outcome = example.finish()
        XCTAssertEqual(outcome.status, 0, outcome.stderr)
        XCTAssertEqual(Array(outcome.lines.dropFirst()), [
            "face: bob: happiness 90, smile 0.80",
            "status: bob: forward, (x,y) = (20, 10)",
            "heart: bob: rate 0.75",
        ])
    }

    func testTheReadmeExampleIsTheQuickstartAndRuns() throws {
        let readme = try String(contentsOf: ServerProcess.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let quickstart = try String(contentsOf: ServerProcess.repositoryRoot.appendingPathComponent("Examples/Quickstart/main.swift"),
                                    encoding: .utf8)
        XCTAssertTrue(Self.swiftBlocks(in: readme).contains(quickstart.trimmingCharacters(in: .newlines)),
                      "README.md's Swift example is Examples/Quickstart/main.swift, as it is")

        let server = try ServerProcess()
        // Line-buffered through the pipe (stdbuf), as on a terminal.
        let example = try ClientProcess(["-oL", ClientProcess.built("Quickstart").path], environment: ["HAPPY_URL": url(server)],
                                        binary: URL(fileURLWithPath: "/usr/bin/stdbuf"))
        XCTAssertTrue(example.waitForOutput { out, _ in out.contains("applied at seq 1: the dragon is at x = 20.0") },
                      example.stdout + example.stderr)
        let (bob, _) = try TestClient.join(server, room: "lobby", name: "bob")
        bob.intent("dragon.back")
        XCTAssertTrue(example.waitForOutput { out, _ in out.contains("#2 bob: backButtonClicked:") },
                      example.stdout + example.stderr)
        example.signal(SIGTERM)
        _ = example.finish()
    }

    func testTheRoomTourExampleFollowsTheRoomAndLeaves() throws {
        let server = try ServerProcess()
        let example = try ClientProcess(["-oL", ClientProcess.built("RoomTour").path, "2"],
                                        environment: ["HAPPY_URL": url(server)], binary: URL(fileURLWithPath: "/usr/bin/stdbuf"))
        XCTAssertTrue(example.waitForOutput { out, _ in out.contains("set at seq 1") }, example.stdout + example.stderr)
        let (bob, _) = try TestClient.join(server, room: "tour", name: "bob")
        let outcome = example.finish()
        XCTAssertEqual(outcome.status, 0, outcome.stderr)
        for line in ["status: connected", "here (1): guide", "here (2): bob, guide", "happiness 75", "set at seq 1",
                     "round trip under a second"] {
            XCTAssertTrue(outcome.lines.contains(line), "no \"\(line)\" in:\n\(outcome.stdout)")
        }
        XCTAssertEqual(outcome.lines.last, "left", "every sequence ended with the room")
        bob.close()
    }

    func testEverySwiftBlockOfTheSwiftClientGuideIsInAnExampleThatIsBuiltAndRun() throws {
        let root = ServerProcess.repositoryRoot
        let guide = try String(contentsOf: root.appendingPathComponent("docs/swift-client.md"), encoding: .utf8)
        let examples = try ["Examples/Quickstart/main.swift", "Examples/SeedController/main.swift",
                             "Examples/RoomTour/main.swift"].map {
            try String(contentsOf: root.appendingPathComponent($0), encoding: .utf8)
        }
        let blocks = Self.swiftBlocks(in: guide)
        XCTAssertGreaterThanOrEqual(blocks.count, 3)
        for block in blocks {
            XCTAssertTrue(examples.contains { $0.contains(block) }, "not in an example:\n\(block)")
        }
    }

    /// The text of each ```swift block.
    static func swiftBlocks(in markdown: String) -> [String] {
        markdown.components(separatedBy: "```swift\n").dropFirst().compactMap {
            $0.components(separatedBy: "\n```").first
        }
    }
}
