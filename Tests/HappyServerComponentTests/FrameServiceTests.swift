import HappyCore
import HappyRender
@testable import HappyServer
import XCTest

/// `/frame/{view}.png` and `/stream/{view}.png`: ETags, revalidation, and
/// real renders on the worker threads, collected through the inbox.
final class FrameServiceTests: XCTestCase {
    private static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// A server whose renderer has the repository's art (every server loads it when built).
    private func serverWithArt(_ config: HappyConfig = TestServer.config()) throws -> TestServer {
        TestServer(config: config)
    }

    func testEtagNamesEpochSeqViewSizeAndStep() {
        let key = FrameKey(room: "lobby", epoch: "e42", seq: 7, view: .heart, width: 120, height: 80, step: 13)
        XCTAssertEqual(key.etag, #""e42-7-heart-120x80-13""#)
    }

    func testIfNoneMatchComparesWeaklyAndAcceptsLists() {
        let etag = #""e-1-face-10x10-0""#
        XCTAssertTrue(EntityTag.header(etag, matches: etag))
        XCTAssertTrue(EntityTag.header("W/" + etag, matches: etag))
        XCTAssertTrue(EntityTag.header(#""other", "# + etag, matches: etag))
        XCTAssertTrue(EntityTag.header("*", matches: etag))
        XCTAssertFalse(EntityTag.header(#""e-2-face-10x10-0""#, matches: etag))
    }

    func testFrameIsRenderedAsPNGWithItsETag() throws {
        let test = try serverWithArt()
        let frame = test.begin("GET", "/frame/face.png", query: ["w": "64", "h": "48"])
        test.finish(frame)

        XCTAssertEqual(frame.status, 200)
        XCTAssertEqual(frame.transport.head?.contentType, "image/png")
        XCTAssertEqual(frame.transport.head?.cacheControl, "no-cache")
        XCTAssertEqual(Array(frame.body.prefix(8)), Self.pngSignature)
        XCTAssertEqual(frame.transport.head?.contentLength, frame.body.count)
        let epoch = try XCTUnwrap(test.server.directory["lobby"]?.room?.epoch)
        XCTAssertEqual(frame.header("ETag"), #""\#(epoch)-0-face-64x48-0""#)
        XCTAssertEqual(test.metrics.renders, 1)

        // The same frame again comes from the cache, without another thread.
        let again = test.request("GET", "/frame/face.png", query: ["w": "64", "h": "48"])
        XCTAssertEqual(again.status, 200)
        XCTAssertEqual(again.body, frame.body)
        XCTAssertEqual(test.metrics.renderCacheHits, 1)
    }

    func testMatchingIfNoneMatchIsNotModified() throws {
        let test = try serverWithArt()
        let first = test.begin("GET", "/frame/dragon.png", query: ["w": "32"])
        test.finish(first)
        let etag = try XCTUnwrap(first.header("ETag"))

        let revalidated = test.request("GET", "/frame/dragon.png", query: ["w": "32"], headers: ["if-none-match": etag])
        XCTAssertEqual(revalidated.status, 304)
        XCTAssertEqual(revalidated.header("ETag"), etag)
        XCTAssertTrue(revalidated.body.isEmpty)
        XCTAssertNil(revalidated.transport.head?.contentType, "a 304 names no type")
        XCTAssertNil(revalidated.transport.head?.contentLength)
        XCTAssertEqual(test.metrics.renders, 1, "nothing was drawn for the 304")
    }

    func testETagChangesWithTheRoomsSeq() throws {
        let test = try serverWithArt()
        let before = test.begin("GET", "/frame/face.png", query: ["w": "32"])
        test.finish(before)
        let oldTag = try XCTUnwrap(before.header("ETag"))

        test.request("POST", "/api/intent", body: #"{"action":"face.setHappiness","value":90}"#)
        let stale = test.begin("GET", "/frame/face.png", query: ["w": "32"], headers: ["if-none-match": oldTag])
        test.finish(stale)

        XCTAssertEqual(stale.status, 200, "the old tag no longer matches")
        let newTag = try XCTUnwrap(stale.header("ETag"))
        XCTAssertNotEqual(newTag, oldTag)
        XCTAssertTrue(newTag.contains("-1-face-"), newTag)
        XCTAssertNotEqual(stale.body, before.body, "a happier face")
    }

    func testAnimatedViewTakesItsStepFromPhase() throws {
        let test = try serverWithArt()
        let frame = test.begin("GET", "/frame/heart.png", query: ["w": "32", "h": "32", "phase": "42"])
        test.finish(frame)
        XCTAssertEqual(frame.status, 200)
        XCTAssertTrue(frame.header("ETag")?.hasSuffix("-heart-32x32-42\"") == true, frame.header("ETag") ?? "")
    }

    func testUnknownViewIsNotFound() throws {
        let test = try serverWithArt()
        let frame = test.request("GET", "/frame/nothing.png")
        XCTAssertEqual(frame.status, 404)
        XCTAssertEqual(frame.json?["message"]?.stringValue, "no view nothing.png: use /frame/{face, heart, dragon, scene}.png")
        let stream = test.request("GET", "/stream/face.gif")
        XCTAssertEqual(stream.status, 404)
        XCTAssertEqual(stream.json?["code"]?.stringValue, "not_found")
    }

    func testInvalidSizeIsRefused() throws {
        let test = try serverWithArt()
        let frame = test.request("GET", "/frame/face.png", query: ["w": "9999"])
        XCTAssertEqual(frame.status, 400)
        XCTAssertEqual(frame.json?["message"]?.stringValue, "w must be an integer from 16 to 2048")
    }

    func testServerWithoutTheArtIsNotBuilt() throws {
        let webRoot = FileManager.default.temporaryDirectory.appendingPathComponent("happy-no-art-\(getpid())")
        try FileManager.default.createDirectory(at: webRoot, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: webRoot) }
        var config = TestServer.config()
        config.webRoot = webRoot.path
        XCTAssertThrowsError(try HappyServer(config: config, store: MemoryRoomStore(historySize: 10),
                                             logger: Logger(level: .error))) { error in
            XCTAssertTrue("\(error)".contains(FrameService.artPath), "names the missing art: \(error)")
        }
    }

    func testStreamStartsAMultipartResponseAndSendsTheFirstFrame() throws {
        let test = try serverWithArt()
        let stream = test.begin("GET", "/stream/face.png", query: ["w": "32", "h": "32"])

        XCTAssertEqual(test.server.streams.open.count, 1)
        XCTAssertEqual(test.metrics.streamsOpened, 1)
        XCTAssertTrue(stream.transport.keptOpenWithoutTimeout)
        XCTAssertEqual(stream.transport.sendBufferLimits, [FrameStreams.socketSendBufferBytes])
        XCTAssertTrue(stream.transport.writablePending)
        test.pump(stream)
        XCTAssertEqual(stream.status, 200)
        XCTAssertEqual(stream.transport.head?.contentType, "multipart/x-mixed-replace; boundary=happyframe")
        XCTAssertNil(stream.transport.head?.contentLength)
        XCTAssertEqual(stream.transport.head?.close, true)

        let partHead = Array("--happyframe\r\nContent-Type: image/png\r\n".utf8)
        test.waitUntil("the first part") {
            test.pump(stream)
            return test.metrics.streamFramesSent == 1
        }
        XCTAssertEqual(Array(stream.body.prefix(partHead.count)), partHead)
        XCTAssertNotNil(stream.body.firstRange(of: Self.pngSignature))
        XCTAssertFalse(stream.transport.finalWritten, "a stream runs until its client goes")

        stream.exchange.finish()  // the client hung up
        XCTAssertTrue(test.server.streams.open.isEmpty)
        XCTAssertTrue(test.server.directory["lobby"]?.streams.isEmpty == true)
    }

    func testAStreamWhoseClientHungUpClosesFromItsWritableCallback() throws {
        let test = try serverWithArt()
        let stream = test.begin("GET", "/stream/face.png", query: ["w": "32", "h": "32"])
        test.waitUntil("the first part") {
            test.pump(stream)
            return test.metrics.streamFramesSent == 1
        }
        XCTAssertFalse(stream.transport.writablePending)
        stream.transport.peerHasHungUp = true
        test.sweep()

        XCTAssertEqual(stream.transport.kills, 0, "not killed: a kill waits for lws's timers, which its readable end of file holds up")
        XCTAssertTrue(stream.transport.writablePending)
        let (ok, _) = test.server.responder.writeable(stream.exchange)
        XCTAssertFalse(ok, "the writable callback closes the connection")
    }

    func testStreamsAreRefusedWhileShuttingDown() throws {
        let test = try serverWithArt()
        test.server.beginShutdown(signal: 0)
        let stream = test.request("GET", "/stream/face.png")
        XCTAssertEqual(stream.status, 503)
        XCTAssertEqual(stream.json?["message"]?.stringValue, "server shutting down")
        XCTAssertTrue(test.server.streams.open.isEmpty)
    }
}
