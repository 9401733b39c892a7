import Foundation
import HappyCore
import XCTest

/// `/metrics` counters add up after known traffic; logs follow `log.*`.
final class ObservabilityTests: XCTestCase {
    /// Metric samples by full name including labels, e.g. `happy_intents_total{action="x",result="y"}`.
    private func scrape(_ server: ServerProcess) throws -> [String: Double] {
        let response = try HTTP.get("\(server.httpBase)/metrics")
        XCTAssertEqual(response.status, 200)
        XCTAssertTrue(response.headers["content-type"]?.hasPrefix("text/plain") ?? false)
        var samples: [String: Double] = [:]
        for line in response.text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                XCTFail("malformed sample line: \(line)")
                continue
            }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    /// Wire size of a server text frame carrying `text`.
    private func frameSize(_ text: String) -> Int {
        let payload = text.utf8.count
        return payload + (payload < 126 ? 2 : payload <= 0xFFFF ? 4 : 10)
    }

    func testCountersAddUpAfterKnownTraffic() throws {
        let server = try ServerProcess()
        var received: [ReceivedMessage] = []
        let (alice, welcomeA) = try TestClient.join(server, room: "m", name: "alice")
        let (bob, welcomeB) = try TestClient.join(server, room: "m", name: "bob")
        _ = (welcomeA, welcomeB)

        alice.intent("dragon.forward", id: "1")                       // applied, event
        alice.intent("dragon.back", id: "2")                          // applied, event
        alice.intent("dragon.back", id: "3")                          // blocked, event
        alice.intent("dragon.setHidden", id: "4", ["value": false])   // unchanged, no event
        alice.send("not json")                                        // bad_json
        alice.intent("face.setHappiness", id: "5", ["value": 50.5])   // invalid_value
        let http = try HTTP.post("\(server.httpBase)/api/intent?room=m", body: #"{"action":"face.setHappiness","value":99}"#)
        XCTAssertEqual(http.status, 200)

        // alice: 4 events, 4 acks, 2 errors, 1 presence; bob: 4 events.
        for _ in 0..<11 { received.append(try XCTUnwrap(alice.nextMessage(timeout: 5))) }
        for _ in 0..<4 { received.append(try XCTUnwrap(bob.nextMessage(type: "event", timeout: 5))) }
        XCTAssertTrue(alice.drain(for: 0.3).isEmpty)

        let metrics = try scrape(server)
        XCTAssertEqual(metrics["happy_connections"], 2)
        XCTAssertEqual(metrics["happy_connections_opened_total"], 2)
        XCTAssertEqual(metrics["happy_rooms_occupied"], 1)
        XCTAssertEqual(metrics[#"happy_intents_total{action="dragon.forward",result="applied"}"#], 1)
        XCTAssertEqual(metrics[#"happy_intents_total{action="dragon.back",result="applied"}"#], 1)
        XCTAssertEqual(metrics[#"happy_intents_total{action="dragon.back",result="blocked"}"#], 1)
        XCTAssertEqual(metrics[#"happy_intents_total{action="dragon.setHidden",result="unchanged"}"#], 1)
        XCTAssertEqual(metrics[#"happy_intents_total{action="face.setHappiness",result="applied"}"#], 1, "the HTTP intent")
        XCTAssertEqual(metrics["happy_events_total"], 4)
        XCTAssertEqual(metrics[#"happy_errors_total{code="bad_json"}"#], 1)
        XCTAssertEqual(metrics[#"happy_errors_total{code="invalid_value"}"#], 1)
        XCTAssertEqual(metrics[#"happy_http_responses_total{status="2xx"}"#], 1)

        // Every message and byte the clients read was counted once, welcomes included.
        let welcomes = [try XCTUnwrap(alice.welcomeText), try XCTUnwrap(bob.welcomeText)]
        let texts = welcomes + received.map(\.text)
        XCTAssertEqual(metrics["happy_messages_out_total"], Double(texts.count))
        XCTAssertEqual(metrics["happy_bytes_out_total"], Double(texts.map(frameSize).reduce(0, +)))

        // Store commits: one histogram observation per group commit, all counted in +Inf.
        let commits = try XCTUnwrap(metrics["happy_store_commit_seconds_count"])
        XCTAssertGreaterThan(commits, 0)
        XCTAssertEqual(metrics[#"happy_store_commit_seconds_bucket{le="+Inf"}"#], commits)
        XCTAssertEqual(metrics["happy_store_healthy"], 1)
        XCTAssertGreaterThan(metrics["happy_process_resident_memory_bytes"] ?? 0, 1_000_000)
        XCTAssertGreaterThan(metrics["happy_process_open_fds"] ?? 0, 3)

        bob.close()
        XCTAssertNotNil(alice.next(type: "presence"))
        let after = try scrape(server)
        XCTAssertEqual(after["happy_connections"], 1)
        XCTAssertEqual(after["happy_connections_closed_total"], 1)
    }

    func testRefusalsAndRateLimitsAreCounted() throws {
        let server = try ServerProcess(["limits": ["maxClients": 1, "intentsPerSecond": 0.1, "intentBurst": 1]])
        let (client, _) = try TestClient.join(server)
        let refused = TestClient(url: server.wsURL)
        XCTAssertNotNil(refused.waitForClose() as Any?, "the connection closes")
        client.intent("dragon.forward", id: "a")
        client.intent("dragon.forward", id: "b")
        XCTAssertEqual(client.next(type: "error")?["code"]?.stringValue, "rate_limited")
        let metrics = try scrape(server)
        XCTAssertEqual(metrics[#"happy_connections_refused_total{reason="maxClients"}"#], 1)
        XCTAssertEqual(metrics["happy_rate_limited_total"], 1)
        XCTAssertEqual(metrics[#"happy_errors_total{code="rate_limited"}"#], 1)
    }

    func testJSONLogLinesForOpenCloseAndRefusals() throws {
        let server = try ServerProcess(["log": ["level": "info", "format": "json"]])
        let (client, _) = try TestClient.join(server, name: "logged")
        let bad = TestClient(url: server.wsURL, query: [("room", "no spaces allowed")])
        XCTAssertNotNil(bad.waitForClose() as Any?, "the connection closes")
        client.close()
        XCTAssertNotNil(client.waitForClose() as Any?, "the connection closes")
        Thread.sleep(forTimeInterval: 0.3)
        let lines = server.logText.split(separator: "\n").map(String.init)
        var messages: [String] = []
        for line in lines {
            let json = try XCTUnwrap(try? JSONParser.parse(line), "not a JSON log line: \(line)")
            XCTAssertNotNil(json["time"]?.stringValue)
            XCTAssertNotNil(json["level"]?.stringValue)
            messages.append(json["msg"]?.stringValue ?? "")
        }
        XCTAssertTrue(messages.contains("listening"))
        XCTAssertTrue(lines.contains { $0.contains(#""msg":"open""#) && $0.contains(#""name":"logged""#) })
        XCTAssertTrue(lines.contains { $0.contains(#""msg":"close""#) })
        XCTAssertTrue(lines.contains { $0.contains(#""msg":"refused""#) && $0.contains(#""reason":"room""#) })
    }

    func testWarnLevelHidesInfoLinesButNotLifecycle() throws {
        let server = try ServerProcess(["log": ["level": "warn", "format": "text"]])
        let (client, _) = try TestClient.join(server)
        client.close()
        XCTAssertNotNil(client.waitForClose() as Any?, "the connection closes")
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertTrue(server.logText.contains("listening"))
        XCTAssertFalse(server.logText.contains(" open "), server.logText)
        XCTAssertFalse(server.logText.contains("INFO open"), server.logText)
    }
}
