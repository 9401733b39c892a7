import Foundation
import HappyClientKit
import HappyCore
import XCTest

/// `compression: true`: `/ws` accepts permessage-deflate. Such a connection
/// has its own write path (one message per write, framed and compressed by
/// lws) instead of the pre-framed batches, so it is driven here end to end,
/// next to a client that offers nothing on the same server.
final class CompressionTests: XCTestCase {
    private var server: ServerProcess!
    private let deflate = WebSocketOptions(offersCompression: true)

    override func setUpWithError() throws {
        server = try ServerProcess(["compression": true,
                                    "limits": ["intentsPerSecond": 2000, "intentBurst": 2000],
                                    // A welcome listing all 101 clients (a crowd's lists at most this many).
                                    "crowd": ["presenceBatchAbove": 1000]])
    }

    override func tearDown() {
        server?.stop()
        server = nil
    }

    func testTheHandshakeAcceptsTheOfferAndTheServerCompressesItsMessages() throws {
        let offering = try RawWebSocket(port: server.port, target: "/ws?room=z",
                                        headers: ["Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits"])
        XCTAssertTrue(offering.upgraded, offering.handshake)
        let accepted = try XCTUnwrap(header("sec-websocket-extensions", in: offering.handshake),
                                     "no Sec-WebSocket-Extensions in the answer:\n\(offering.handshake)")
        XCTAssertTrue(accepted.hasPrefix("permessage-deflate"), accepted)
        guard case .text(let compressed)? = offering.nextFrame() else { return XCTFail("no welcome frame") }
        XCTAssertTrue(offering.lastFrameCompressed, "the welcome is sent with RSV1 (compressed)")
        XCTAssertFalse(compressed.hasPrefix("{\"type\":\"welcome\""), "the payload on the wire is not the plain JSON")

        let plain = try RawWebSocket(port: server.port, target: "/ws?room=z")
        XCTAssertTrue(plain.upgraded, plain.handshake)
        XCTAssertNil(header("sec-websocket-extensions", in: plain.handshake), "nothing negotiated without an offer")
        guard case .text(let welcome)? = plain.nextFrame() else { return XCTFail("no welcome frame") }
        XCTAssertFalse(plain.lastFrameCompressed)
        XCTAssertEqual(JSONValue.parse(welcome)["type"]?.stringValue, "welcome")
    }

    func testCompressingAndPlainClientsGetTheSameEventsAndAcksInOrder() throws {
        let (zipped, _) = try TestClient.join(server, room: "z", name: "zipped", options: deflate)
        XCTAssertEqual(zipped.extensions.map { $0.hasPrefix("permessage-deflate") }, true,
                       "the client kit offered the extension and the server took it: \(zipped.extensions ?? "none")")
        let (plain, _) = try TestClient.join(server, room: "z", name: "plain")
        XCTAssertNil(plain.extensions, "a client that offers nothing gets nothing")
        XCTAssertEqual(zipped.next(type: "presence")?["joined"]?["name"]?.stringValue, "plain")

        let zippedSent = sendIntents(from: zipped, prefix: "z", count: 40)
        let zippedSeen = try answers(of: zipped, until: "z39")
        try assertEventsThenAcks(zippedSeen, ids: zippedSent, label: "compressing sender")
        XCTAssertEqual(try collect(plain, events: 40), zippedSeen.filter { $0.type == "event" }.map(\.text),
                       "the plain client got the same events, byte for byte")

        let plainSent = sendIntents(from: plain, prefix: "p", count: 40)
        let plainSeen = try answers(of: plain, until: "p39")
        try assertEventsThenAcks(plainSeen, ids: plainSent, label: "plain sender")
        XCTAssertEqual(try collect(zipped, events: 40), plainSeen.filter { $0.type == "event" }.map(\.text),
                       "the compressing client got the same events, byte for byte")
    }

    func testLargeWelcomeAndAResumeReplayArriveWholeAndInOrder() throws {
        // A crowd with long names makes the welcome's presence list several kilobytes.
        var crowd: [TestClient] = []
        for index in 0..<100 {
            crowd.append(try TestClient.join(server, room: "big", name: String(format: "member-%03d-", index)
                + String(repeating: "x", count: 20)).0)
        }
        let (zipped, welcome) = try TestClient.join(server, room: "big", name: "zipped", options: deflate)
        XCTAssertNotNil(zipped.extensions)
        let size = zipped.welcomeText?.utf8.count ?? 0
        XCTAssertGreaterThan(size, 5000, "the welcome is a large message")
        XCTAssertEqual(welcome["presence"]?.arrayValue?.count, 101)
        XCTAssertEqual(welcome["presenceCount"]?.intValue, 101)
        let names = Set(welcome["presence"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? [])
        XCTAssertTrue(names.contains("member-099-" + String(repeating: "x", count: 20)), "the list arrived whole")
        let epoch = try XCTUnwrap(welcome["epoch"]?.stringValue)
        let since = try XCTUnwrap(welcome["seq"]?.intValue)
        zipped.close()
        XCTAssertTrue(zipped.waitForClose() != nil)
        crowd.forEach { $0.close() }

        let (writer, _) = try TestClient.join(server, room: "big", name: "writer")
        let ids = sendIntents(from: writer, prefix: "w", count: 200)
        _ = try answers(of: writer, until: ids.last!)

        let (back, resumed) = try TestClient.join(server, room: "big", name: "zipped", since: UInt64(since), epoch: epoch,
                                                  options: deflate)
        XCTAssertNotNil(back.extensions)
        XCTAssertEqual(resumed["recovered"]?.boolValue, true)
        XCTAssertEqual(resumed["seq"]?.intValue, since + 200)
        back.send(#"{"type":"ping","id":"end"}"#)
        var replayed: [JSONValue] = []
        while let message = back.next(timeout: 10), message["type"]?.stringValue != "pong" {
            if message["type"]?.stringValue == "event" { replayed.append(message) }
        }
        XCTAssertEqual(replayed.compactMap { $0["seq"]?.intValue }, Array(since + 1...since + 200),
                       "every missed event, once, in order")
        XCTAssertEqual(replayed.last?["state"], resumed["state"], "the last replayed event ends at the welcome's state")
    }

    func testCompressedClientMessagesAreLimitedByTheirInflatedSize() throws {
        let (zipped, _) = try TestClient.join(server, room: "limit", options: deflate)
        XCTAssertNotNil(zipped.extensions)
        let head = #"{"type":"intent","id":"big","action":"face.setHappiness","value":61,"pad":""#
        let fits = head + String(repeating: "a", count: 4096 - head.utf8.count - 2) + #""}"#
        XCTAssertEqual(fits.utf8.count, 4096)
        zipped.send(fits)
        XCTAssertEqual(zipped.next(type: "ack")?["result"]?.stringValue, "applied",
                       "a message of exactly maxMessageBytes, reassembled from inflated chunks, is accepted")
        // Compresses to a few dozen bytes, inflates past the limit.
        zipped.send(head + String(repeating: "a", count: 20000) + #""}"#)
        XCTAssertEqual(zipped.waitForClose(), .some(1009), server.logText)
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/state?room=limit").json?["seq"]?.intValue, 1)
    }

    // MARK: helpers

    /// Sends `count` intents that each change the scene; returns their ids.
    private func sendIntents(from client: TestClient, prefix: String, count: Int) -> [String] {
        (0..<count).map { index in
            let id = "\(prefix)\(index)"
            if index % 2 == 0 {
                client.intent("face.setHappiness", id: id, ["value": happiness(index)])
            } else {
                client.intent("heart.setRate", id: id, ["value": rate(index)])
            }
            return id
        }
    }

    /// Values that differ from one intent of a kind to the next, so each is `applied` with an event.
    private func happiness(_ index: Int) -> Int { 10 + (index / 2) % 80 }
    private func rate(_ index: Int) -> Double { Double((index / 2) % 99 + 1) / 100 }

    /// Everything the client receives up to the ack with `id`.
    private func answers(of client: TestClient, until id: String) throws -> [ReceivedMessage] {
        var seen: [ReceivedMessage] = []
        while true {
            let message = try XCTUnwrap(client.nextMessage(timeout: 10), "no ack \(id); so far \(seen.count) messages")
            seen.append(message)
            if message.type == "ack" && message.json["id"]?.stringValue == id { return seen }
        }
    }

    /// Each intent's event, then its ack with the event's seq, in the order sent.
    private func assertEventsThenAcks(_ seen: [ReceivedMessage], ids: [String], label: String,
                                      file: StaticString = #filePath, line: UInt = #line) throws {
        let relevant = seen.filter { $0.type == "event" || $0.type == "ack" }
        XCTAssertEqual(relevant.count, ids.count * 2, label, file: file, line: line)
        var lastSeq = 0
        for (index, id) in ids.enumerated() where index * 2 + 1 < relevant.count {
            let event = relevant[index * 2].json, ack = relevant[index * 2 + 1].json
            XCTAssertEqual(event["type"]?.stringValue, "event", "\(label) \(id)", file: file, line: line)
            XCTAssertEqual(ack["id"]?.stringValue, id, label, file: file, line: line)
            XCTAssertEqual(ack["result"]?.stringValue, "applied", label, file: file, line: line)
            let seq = try XCTUnwrap(event["seq"]?.intValue, file: file, line: line)
            XCTAssertEqual(ack["seq"]?.intValue, seq, "\(label): the ack names its event", file: file, line: line)
            XCTAssertGreaterThan(seq, lastSeq, label, file: file, line: line)
            lastSeq = seq
            if index % 2 == 0 {
                XCTAssertEqual(event["state"]?["face"]?["happiness"]?.intValue, happiness(index), label,
                               file: file, line: line)
            } else {
                XCTAssertEqual(event["state"]?["heart"]?["rate"]?.doubleValue, rate(index), label, file: file, line: line)
            }
        }
    }

    /// The texts of the next `events` events the client receives (the ones it already kept first).
    private func collect(_ client: TestClient, events count: Int) throws -> [String] {
        var texts: [String] = []
        while texts.count < count {
            let message = try XCTUnwrap(client.nextMessage(type: "event", timeout: 10), "\(texts.count) of \(count) events")
            texts.append(message.text)
        }
        return texts
    }

    private func header(_ name: String, in handshake: String) -> String? {
        for line in handshake.split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":"), line[..<colon].lowercased() == name else { continue }
            return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return nil
    }
}
