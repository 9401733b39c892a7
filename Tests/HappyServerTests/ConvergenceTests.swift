import Foundation
import HappyCore
import XCTest

/// Many clients changing one room at once all see the same history.
final class ConvergenceTests: XCTestCase {
    static let clientCount = 8
    static let intentsPerClient = 50

    /// What one client saw.
    private final class Transcript: @unchecked Sendable {
        var events: [ReceivedMessage] = []
        var answers: [String: [JSONValue]] = [:]
        var sentIDs: [String] = []
        var other: [String] = []
        var timedOut = false
    }

    func testConcurrentRandomIntentsConvergeInOneOrder() throws {
        let server = try ServerProcess()
        var clients: [TestClient] = []
        for index in 0..<Self.clientCount {
            clients.append(try TestClient.join(server, room: "busy", name: "client\(index)").0)
        }
        // Let every presence message arrive before the intents start.
        for client in clients { _ = client.drain(for: 0.05) }
        let transcripts = (0..<Self.clientCount).map { _ in Transcript() }
        let allClients = UncheckedSendable(clients)

        runConcurrently(Self.clientCount) { index in
            let client = allClients.value[index]
            let transcript = transcripts[index]
            var random = SeededRandom(seed: UInt64(1000 + index))
            for number in 0..<Self.intentsPerClient {
                let id = "c\(index)-\(number)"
                transcript.sentIDs.append(id)
                client.send(json: Self.randomIntent(id: id, using: &random))
            }
            let deadline = Date(timeIntervalSinceNow: 30)
            var answered = 0
            while answered < Self.intentsPerClient {
                guard Date() < deadline, let message = client.nextMessage(timeout: deadline.timeIntervalSinceNow) else {
                    transcript.timedOut = true
                    return
                }
                switch message.type {
                case "event":
                    transcript.events.append(message)
                case "ack", "error":
                    let id = message.json["id"]?.stringValue ?? "<none>"
                    transcript.answers[id, default: []].append(message.json)
                    answered += 1
                default:
                    transcript.other.append(message.text)
                }
            }
        }

        let final = try XCTUnwrap(HTTP.get("\(server.httpBase)/api/state?room=busy").json)
        let finalSeq = try XCTUnwrap(final["seq"]?.intValue)
        XCTAssertGreaterThan(finalSeq, Self.clientCount * Self.intentsPerClient / 2, "most intents change the scene")

        var reference: [String]?
        for (index, transcript) in transcripts.enumerated() {
            XCTAssertFalse(transcript.timedOut, "client \(index) did not get all its answers")
            // The events after this client's last answer are still on their way.
            while (transcript.events.last?.json["seq"]?.intValue ?? 0) < finalSeq,
                  let message = clients[index].nextMessage(type: "event", timeout: 10) {
                transcript.events.append(message)
            }
            let seqs = transcript.events.compactMap { $0.json["seq"]?.intValue }
            XCTAssertEqual(seqs, consecutive(1, through: finalSeq), "client \(index): every event once, in seq order")
            XCTAssertEqual(transcript.other, [], "client \(index): unexpected messages")

            XCTAssertEqual(Set(transcript.answers.keys), Set(transcript.sentIDs), "client \(index): one answer per intent")
            for (id, answers) in transcript.answers where answers.count != 1 {
                XCTFail("client \(index): \(answers.count) answers for \(id)")
            }
            let codes = transcript.answers.values.compactMap { $0.first?["code"]?.stringValue }
            XCTAssertTrue(codes.allSatisfy { $0 == "invalid_value" }, "client \(index): \(codes)")

            let texts = transcript.events.map(\.text)
            if let reference {
                XCTAssertTrue(texts == reference, "client \(index) saw other event texts than client 0")
            } else {
                reference = texts
            }
        }
        let last = try XCTUnwrap(transcripts[0].events.last?.json)
        XCTAssertEqual(last["seq"]?.intValue, finalSeq)
        XCTAssertJSONEqual(final["state"], last["state"] ?? .null, "GET /api/state is the last event's state")

        let acks = transcripts.flatMap { $0.answers.values.compactMap(\.first) }.filter { $0["type"]?.stringValue == "ack" }
        print("convergence: \(Self.clientCount) clients, \(Self.clientCount * Self.intentsPerClient) intents, "
              + "\(finalSeq) events, \(acks.count) acks")
        let eventSeqs = Set(acks.compactMap { ack -> Int? in
            ack["result"]?.stringValue == "unchanged" ? nil : ack["seq"]?.intValue
        })
        XCTAssertEqual(eventSeqs.count, finalSeq, "each event is acknowledged to its sender under its own seq")
    }

    /// One of every action, with random (sometimes out-of-range or invalid) values.
    static func randomIntent(id: String, using random: inout SeededRandom) -> [String: Any] {
        var intent: [String: Any] = ["type": "intent", "id": id]
        switch random.next(below: 11) {
        case 0:
            intent["action"] = "face.setHappiness"
            intent["value"] = random.next(below: 141) - 20
        case 1:
            intent["action"] = "face.nudgeHappiness"
            intent["delta"] = random.next(below: 241) - 120
        case 2:
            intent["action"] = "face.setScale"
            intent["value"] = Double(random.next(below: 300)) / 100
        case 3:
            intent["action"] = "face.pinch"
            intent["factor"] = 0.5 + Double(random.next(below: 100)) / 100
        case 4:
            intent["action"] = "heart.setRate"
            intent["value"] = Double(random.next(below: 140)) / 100 - 0.2
        case 5:
            intent["action"] = "heart.setStyle"
            intent["fillColor"] = String(format: "#%06x", random.next(below: 0x1000000))
            intent["lineWidth"] = random.next(below: 24)
        case 6:
            intent["action"] = "dragon.forward"
        case 7:
            intent["action"] = "dragon.back"
        case 8:
            intent["action"] = "dragon.setHidden"
            intent["value"] = random.next(below: 2) == 0
        case 9:
            intent["action"] = "dragon.toggleHidden"
        default:
            intent["action"] = "room.reset"
        }
        return intent
    }
}

/// SplitMix64: reproducible test data.
struct SeededRandom {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func next(below bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
