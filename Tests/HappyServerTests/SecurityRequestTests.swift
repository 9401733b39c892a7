import Foundation
import HappyCore
import XCTest

/// What one client's requests may cost the server, tried on a live server:
/// reads that stored rooms, rooms taken from everyone, an identity borrowed
/// with a header, frames that took the cores and the memory, request framing
/// two readers could take two ways (findings 3, 4, 5 and 7 of the security review).
final class SecurityRequestTests: XCTestCase {
    private let generousHTTP: [String: Any] = ["httpPerSecond": 100_000, "httpBurst": 100_000]

    func testReadingRoomsThatDoNotExistStoresNothing() throws {
        let server = try ServerProcess(["limits": generousHTTP])
        func epoch(_ room: String) throws -> String? {
            try HTTP.get("\(server.httpBase)/api/state?room=\(room)").json?["epoch"]?.stringValue
        }
        for index in 0..<300 {
            let state = try HTTP.get("\(server.httpBase)/api/state?room=ghost\(index)")
            XCTAssertEqual(state.status, 200)
            XCTAssertEqual(state.json?["seq"]?.intValue, 0)
            XCTAssertEqual(state.json?["state"]?["face"]?["happiness"]?.intValue, 50, "the default scene")
        }
        let history = try HTTP.get("\(server.httpBase)/api/history?room=ghost1")
        XCTAssertEqual(history.json?["seq"]?.intValue, 0, "a room with no events")
        XCTAssertEqual(history.json?["first"]?.intValue, 1)
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/state?room=ghost1&seq=0").json?["seq"]?.intValue, 0)
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/frame/face.png?room=ghost2").status, 200, "frames of it still draw")

        // Changing a room or joining it records it; reading stored nothing.
        XCTAssertEqual(try HTTP.post("\(server.httpBase)/api/intent?room=ghost7", body: #"{"action":"dragon.forward"}"#).status, 200)
        let (visitor, welcome) = try TestClient.join(server, room: "ghost8", name: "visitor")
        visitor.close()
        let before = (read: try epoch("ghost1"), changed: try epoch("ghost7"), joined: welcome["epoch"]?.stringValue)
        server.stop()
        try server.start()
        XCTAssertNotEqual(try epoch("ghost1"), before.read, "nothing was stored for a room only read")
        XCTAssertEqual(try epoch("ghost7"), before.changed, "changed, so recorded")
        XCTAssertEqual(try epoch("ghost8"), before.joined, "joined, so recorded")
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/state?room=ghost7").json?["seq"]?.intValue, 1)
        let database = server.dataDirectory.appendingPathComponent("happy.sqlite3").path
        let size = (try? FileManager.default.attributesOfItem(atPath: database)[.size] as? NSNumber)?.intValue ?? 0
        XCTAssertLessThan(size, 256 * 1024, "300 reads, two rooms: \(size) bytes")
    }

    func testOneAddressCannotTakeEveryRoom() throws {
        let server = try ServerProcess(["limits": ["roomsPerAddress": 3]])
        let members = try (1...3).map { try TestClient.join(server, room: "mine\($0)", name: "m\($0)").0 }
        // A raw socket reads the code as sent (lws's own client turns 1012-1014 into 1002).
        let fourth = try RawWebSocket(port: server.port, target: "/ws?room=mine4&name=m4")
        guard case .close(let code, let reason)? = fourth.readUntilClose().close else { return XCTFail("no close frame") }
        XCTAssertEqual(code, 1013)
        XCTAssertTrue(reason.contains("too many new rooms from your address"), reason)
        let (again, _) = try TestClient.join(server, room: "mine1", name: "again")
        defer { withExtendedLifetime((members, again)) {} }
        let overHTTP = try HTTP.post("\(server.httpBase)/api/intent?room=mine5", body: #"{"action":"dragon.forward"}"#)
        XCTAssertEqual(overHTTP.status, 429, overHTTP.text)
        XCTAssertNotNil(overHTTP.headers["retry-after"].flatMap(Int.init))
        XCTAssertEqual(try HTTP.post("\(server.httpBase)/api/intent?room=mine2", body: #"{"action":"dragon.forward"}"#).status,
                       200, "rooms that exist take no allowance")
        let (observer, watched) = try TestClient.join(server, room: "mine6", name: "o", extra: [("observe", "1")])
        XCTAssertEqual(watched["seq"]?.intValue, 0, "watching a new room makes none, so it takes no allowance")
        withExtendedLifetime(observer) {}
    }

    func testATokensNameIsTheSenderWhateverTheHeaderSays() throws {
        let server = try ServerProcess(["auth": ["secret": "identity-secret"]])
        let player = try TokenMinter.mint(server, subject: "alice", role: "player")
        let admin = try TokenMinter.mint(server, subject: "ops", role: "admin")
        let (watcher, _) = try TestClient.join(server, name: "ops", extra: [("token", admin)])
        let answer = try HTTP.post("\(server.httpBase)/api/intent", body: #"{"action":"dragon.forward"}"#,
                                   headers: ["Authorization": "Bearer \(player)", "X-Happy-Name": "root"])
        XCTAssertEqual(answer.status, 200, answer.text)
        XCTAssertEqual(watcher.next(type: "event")?["sender"]?["name"]?.stringValue, "alice", "the token's sub, as on a WebSocket")
    }

    func testFramesCostWhatTheyDrawAndTheirMemoryComesBack() throws {
        let server = try ServerProcess()
        let before = try residentBytes(server.pid)
        // The first big frame fits the burst; the next must wait (Retry-After), reads still go through.
        let first = try HTTP.get("\(server.httpBase)/frame/scene.png?w=2048&h=2048&phase=1")
        XCTAssertEqual(first.status, 200)
        let second = try HTTP.get("\(server.httpBase)/frame/scene.png?w=2048&h=2047&phase=2")
        XCTAssertEqual(second.status, 429, second.text)
        XCTAssertGreaterThanOrEqual(second.headers["retry-after"].flatMap(Int.init) ?? 0, 1)
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/healthz").status, 200)

        // Unique big frames rendered back to back: once they are done, their memory is the system's again.
        let generous = try ServerProcess(["limits": generousHTTP])
        let start = try residentBytes(generous.pid)
        for index in 0..<8 {
            XCTAssertEqual(try HTTP.get("\(generous.httpBase)/frame/scene.png?w=2048&h=\(2048 - index)&phase=\(index)").status, 200)
        }
        let settled = try eventually(seconds: 10) { () -> Int? in
            let now = try residentBytes(generous.pid)
            return now < start + 48 * 1024 * 1024 ? now : nil
        }
        XCTAssertLessThan(settled, start + 48 * 1024 * 1024, "started at \(start), after \(settled)")
        XCTAssertGreaterThan(before, 0)
    }

    func testStreamsAreCappedPerAddress() throws {
        let server = try ServerProcess(["limits": generousHTTP.merging(["streamsPerAddress": 3]) { $1 }])
        let open = try (0..<3).map { _ -> RawHTTPConnection in
            let stream = try RawHTTPConnection(port: server.port)
            stream.get("/stream/face.png?w=64&h=64")
            XCTAssertEqual(try stream.readHead().status, 200)
            return stream
        }
        let fourth = try RawHTTPConnection(port: server.port)
        fourth.get("/stream/face.png?w=64&h=64")
        let refused = try fourth.readHead()
        XCTAssertEqual(refused.status, 429)
        XCTAssertNotNil(refused.headers["retry-after"])
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/frame/face.png?w=64&h=64").status, 200, "frames are not starved")
        withExtendedLifetime(open) {}
    }

    func testRequestFramingTwoReadersCouldTakeTwoWaysIsRefusedAndClosed() throws {
        let server = try ServerProcess()
        let smuggled = "GET /api/state?room=inner HTTP/1.1\r\nHost: x\r\n\r\n"
        let intent = #"{"action":"dragon.forward"}"#
        let requests = [
            // Two lengths: 5, then the rest of the body would be read as a second request.
            "POST /api/intent HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: \(5 + smuggled.utf8.count)\r\n\r\n"
                + "{...}" + smuggled,
            "POST /api/intent HTTP/1.1\r\nHost: x\r\nContent-Length: \(intent.utf8.count)\r\nTransfer-Encoding: chunked\r\n\r\n"
                + intent,
            "POST /api/intent HTTP/1.1\r\nHost: x\r\nContent-Length: 5, 7\r\n\r\n{...}xx",
            "GET /index.html HTTP/1.1\r\nHost: x\r\nContent-Length: \(smuggled.utf8.count)\r\n\r\n" + smuggled,
        ]
        for request in requests {
            let socket = try RawSocket(port: server.port, timeout: 5)
            try socket.send(request)
            let answer = socket.readToEnd()
            let text = String(decoding: answer.bytes, as: UTF8.self)
            XCTAssertTrue(text.hasPrefix("HTTP/1.1 400"), "\(request.prefix(60)): \(text)")
            XCTAssertEqual(text.components(separatedBy: "HTTP/1.1 ").count - 1, 1, "one answer, no second request: \(text)")
            XCTAssertTrue(answer.ending.peerClosed, "the connection is closed: \(answer.ending)")
        }
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/state").json?["seq"]?.intValue, 0, "nothing was applied")
    }

    /// The resident memory of a process, from /proc.
    private func residentBytes(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return 0 }
        return kilobytes * 1024
    }
}
