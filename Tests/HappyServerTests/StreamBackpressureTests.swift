import Foundation
import HappyCore
import XCTest

/// A slow `/stream` reader holds at most one pending frame (docs/operations.md, frames):
/// while it does not read, newer frames replace the pending one instead of
/// queueing, and once it reads again the next frames end at the latest state.
final class StreamBackpressureTests: XCTestCase {
    private let boundary = "happyframe"
    private let view = "/stream/face.png?room=slow&w=1024&h=1024"

    private func metric(_ name: String, _ server: ServerProcess) throws -> Int {
        let text = try HTTP.get("\(server.httpBase)/metrics").text
        let line = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("\(name) ") }, "no \(name)")
        return try XCTUnwrap(Int(line.split(separator: " ")[1]), String(line))
    }

    func testAStalledStreamKeepsOnlyTheLatestFrame() throws {
        let server = try ServerProcess(["limits": ["intentsPerSecond": 1000, "intentBurst": 1000]])
        let stream = try RawHTTPConnection(port: server.port, receiveBuffer: 4096)
        stream.get(view)
        XCTAssertEqual(try stream.readHead().status, 200)
        let first = try stream.readPart(boundary: boundary, timeout: 10).body
        XCTAssertNotNil(PNGHeader.size(first))
        let sentBefore = try metric("happy_stream_frames_sent_total", server)
        let replacedBefore = try metric("happy_stream_frames_replaced_total", server)
        let residentBefore = server.residentBytes()

        // The reader stops; the face changes 60 times, each change a new frame.
        let (writer, _) = try TestClient.join(server, room: "slow")
        let changes = 60
        for index in 0..<changes {
            writer.intent("face.setHappiness", id: "\(index)", ["value": (index * 37) % 101])
            XCTAssertNotNil(writer.next(type: "ack"), "ack \(index)")
            Thread.sleep(forTimeInterval: 0.03)
        }
        writer.intent("face.setHappiness", id: "last", ["value": 77])
        XCTAssertEqual(writer.next(type: "ack")?["id"]?.stringValue, "last")
        let latest = try HTTP.get("\(server.httpBase)/frame/face.png?room=slow&w=1024&h=1024")
        XCTAssertEqual(latest.status, 200)
        let replaced = try eventually(seconds: 10) { () -> Int? in
            let count = try metric("happy_stream_frames_replaced_total", server) - replacedBefore
            return count > 0 ? count : nil
        }
        let sentWhileStalled = try metric("happy_stream_frames_sent_total", server) - sentBefore
        let growth = server.residentBytes() - residentBefore

        // Reading again: what the kernel held, the part in progress, then the latest state.
        var parts: [[UInt8]] = []
        let deadline = Date(timeIntervalSinceNow: 15)
        while parts.last != Array(latest.body), Date() < deadline {
            parts.append(try stream.readPart(boundary: boundary, timeout: 10).body)
        }
        print("stalled stream: \(changes + 1) changes, \(replaced) frames replaced, \(sentWhileStalled) sent while stalled, "
            + "\(parts.count) parts after resuming (\(first.count) bytes each about), server RSS "
            + String(format: "%+.1f MB", Double(growth) / 1e6))
        XCTAssertEqual(parts.last, Array(latest.body), "the stream ends at the latest state")
        // The socket's buffers take a few parts (its send buffer is fixed);
        // past them the server holds the part in progress and one pending part.
        XCTAssertLessThanOrEqual(sentWhileStalled, 8, "the socket buffers hold a few frames, not every change")
        XCTAssertLessThanOrEqual(parts.count, sentWhileStalled + 2, "then the part in progress and one pending part")
        XCTAssertFalse(stream.hasData(within: 1), "no older frame follows the latest")
        XCTAssertLessThan(growth, 64_000_000, "server memory while the stream was stalled")
    }
}
