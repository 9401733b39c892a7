import Foundation
import HappyCore
import XCTest

/// Resuming with `since`/`epoch` (PROTOCOL.md section 3).
final class ResumeTests: XCTestCase {
    private var server: ServerProcess!
    private var writer: TestClient!

    override func setUpWithError() throws {
        server = try ServerProcess(["limits": ["historySize": 5]])
        (writer, _) = try TestClient.join(server, name: "writer")
    }

    override func tearDown() {
        writer = nil
        server = nil
    }

    /// Makes `count` events with the writer; returns their exact texts as it received them.
    private func makeEvents(_ count: Int, file: StaticString = #filePath, line: UInt = #line) -> [ReceivedMessage] {
        var events: [ReceivedMessage] = []
        for index in 0..<count {
            writer.intent("face.nudgeHappiness", id: "n\(index)", ["delta": index % 2 == 0 ? 3 : -1])
            guard let event = writer.nextMessage(type: "event"), writer.next(type: "ack") != nil else {
                XCTFail("no event or ack for intent \(index)", file: file, line: line)
                break
            }
            events.append(event)
        }
        return events
    }

    func testResumeReplaysExactlyTheMissedEventsBeforeNewerOnes() throws {
        let (reader, first) = try TestClient.join(server, name: "reader")
        let epoch = try XCTUnwrap(first["epoch"]?.stringValue)
        _ = makeEvents(2)
        XCTAssertEqual(reader.next(type: "event")?["seq"]?.intValue, 1)
        XCTAssertEqual(reader.next(type: "event")?["seq"]?.intValue, 2)
        reader.close()
        _ = reader.waitForClose()

        let missed = makeEvents(3)
        XCTAssertEqual(missed.map { $0.json["seq"]?.intValue }, [3, 4, 5])

        let (back, welcome) = try TestClient.join(server, name: "reader", since: 2, epoch: epoch)
        XCTAssertEqual(welcome["recovered"]?.boolValue, true)
        XCTAssertEqual(welcome["seq"]?.intValue, 5)
        XCTAssertEqual(welcome["epoch"]?.stringValue, epoch)
        XCTAssertJSONEqual(welcome["state"], missed.last?.json["state"] ?? .null, "welcome.state is the current state")
        writer.intent("dragon.forward", id: "newer")

        var replayed: [String] = []
        for _ in 0..<3 {
            guard let message = back.nextMessage() else { break }
            replayed.append(message.text)
        }
        XCTAssertEqual(replayed, missed.map(\.text), "the missed events, in order, byte for byte")
        let newer = try XCTUnwrap(back.next(type: "event"))
        XCTAssertEqual(newer["seq"]?.intValue, 6, "the next event follows the replay")
        XCTAssertEqual(newer["name"]?.stringValue, "forwardButtonClicked:")
        XCTAssertEqual(back.drain(for: 0.3).filter { $0["type"]?.stringValue == "event" }.count, 0, "no duplicates")
    }

    func testResumeAtTheCurrentSeqRecoversWithoutReplay() throws {
        let (reader, first) = try TestClient.join(server)
        let epoch = try XCTUnwrap(first["epoch"]?.stringValue)
        _ = makeEvents(2)
        reader.close()
        _ = reader.waitForClose()

        let (back, welcome) = try TestClient.join(server, since: 2, epoch: epoch)
        XCTAssertEqual(welcome["recovered"]?.boolValue, true)
        XCTAssertEqual(welcome["seq"]?.intValue, 2)
        XCTAssertEqual(back.drain(for: 0.3).filter { $0["type"]?.stringValue == "event" }.count, 0)
    }

    func testResumeFromTheOldestEventTheRingHoldsRecovers() throws {
        let (_, first) = try TestClient.join(server)
        let epoch = try XCTUnwrap(first["epoch"]?.stringValue)
        let all = makeEvents(8)
        // historySize 5 keeps events 4...8: resuming from 3 needs exactly those.
        let (back, welcome) = try TestClient.join(server, since: 3, epoch: epoch)
        XCTAssertEqual(welcome["recovered"]?.boolValue, true)
        var replayed: [String] = []
        for _ in 0..<5 { if let message = back.nextMessage(type: "event") { replayed.append(message.text) } }
        XCTAssertEqual(replayed, all.suffix(5).map(\.text))
    }

    func testResumeThatCannotBeServedIsNotRecovered() throws {
        let (_, first) = try TestClient.join(server)
        let epoch = try XCTUnwrap(first["epoch"]?.stringValue)
        let events = makeEvents(8)
        let current = try HTTP.get("\(server.httpBase)/api/state").json
        XCTAssertEqual(current?["seq"]?.intValue, 8)
        XCTAssertEqual(current?["epoch"]?.stringValue, epoch)

        let cases: [(String, UInt64, String)] = [
            ("wrong epoch", 6, epoch + "x"),
            ("since newer than seq", 9, epoch),
            ("since older than the history ring", 2, epoch),
            ("since far older than the history ring", 0, epoch),
        ]
        for (label, since, claimedEpoch) in cases {
            let (client, welcome) = try TestClient.join(server, since: since, epoch: claimedEpoch)
            XCTAssertEqual(welcome["recovered"]?.boolValue, false, label)
            XCTAssertEqual(welcome["seq"]?.intValue, 8, label)
            XCTAssertEqual(welcome["epoch"]?.stringValue, epoch, label)
            XCTAssertJSONEqual(welcome["state"], events.last?.json["state"] ?? .null, label)
            XCTAssertEqual(client.drain(for: 0.2).filter { $0["type"]?.stringValue == "event" }.count, 0,
                           "\(label): no replay")
        }
        let (_, noEpoch) = try TestClient.join(server, since: 6)
        XCTAssertEqual(noEpoch["recovered"]?.boolValue, false, "since without epoch")
    }
}
