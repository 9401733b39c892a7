@testable import HappyClientCLI
import HappyClientKit
import HappyCore
import XCTest

/// What the history commands read and print: history pages with their
/// events' exact text, past states, notes, and the replay's pace and lines.
final class HistoryOutputTests: XCTestCase {
    private func eventText(seq: Int, time: Int64, name: String = "forwardButtonClicked:", sender: String = "alice",
                           happiness: Int = 50, dragonX: String = "20", changes: String = "") -> String {
        """
        {"type":"event","seq":\(seq),"room":"k","time":\(time),"name":"\(name)",\
        "sender":{"id":"c7","name":"\(sender)"},"changes":[\(changes)],\
        "state":{"face":{"happiness":\(happiness),"smile":0,"scale":0.9},\
        "heart":{"rate":0.5,"fillColor":"#ff0000","strokeColor":"#000000","lineWidth":1},\
        "dragon":{"x":\(dragonX),"y":10,"hidden":false}}}
        """
    }

    private func page(seq: Int, first: Int, events: [String], epoch: String = "e1") -> HistoryAnswer? {
        let text = #"{"room":"k","epoch":"\#(epoch)","seq":\#(seq),"first":\#(first),"events":[\#(events.joined(separator: ","))]}"#
        return HistoryAnswer(bytes: Array(text.utf8))
    }

    private func event(_ text: String) -> EventMessage {
        guard case .event(let event)? = ServerMessage.decode(text)?.0 else { fatalError("bad event: \(text)") }
        return event
    }

    // MARK: reading answers

    func testRawArrayElementsAreTheExactText() {
        let text = #"{ "a" : {"events":[1]}, "events" : [ {"s":"]\"}{"} , [1, [2]] ,"x",3.10 , true ], "z":[] }"#
        let elements = RawJSON.arrayElements(ofKey: "events", in: Array(text.utf8))?.map { String(decoding: $0, as: UTF8.self) }
        XCTAssertEqual(elements, [#"{"s":"]\"}{"}"#, "[1, [2]]", #""x""#, "3.10", "true"])
        XCTAssertEqual(RawJSON.arrayElements(ofKey: "z", in: Array(text.utf8))?.count, 0)
        XCTAssertNil(RawJSON.arrayElements(ofKey: "missing", in: Array(text.utf8)))
        XCTAssertNil(RawJSON.arrayElements(ofKey: "a", in: Array(text.utf8)), "not an array")
        XCTAssertNil(RawJSON.arrayElements(ofKey: "events", in: Array("[1]".utf8)))
    }

    func testAHistoryPageKeepsEachEventAsBroadcast() throws {
        // 1.0 and 2E1 would come out of a re-encoding as 1 and 20.
        let first = eventText(seq: 4, time: 1_000, dragonX: "2E1", changes: #"{"path":"dragon.x","from":1.0,"to":2E1}"#)
        let second = eventText(seq: 5, time: 1_500, name: "faceView:didChangeHappiness:", sender: "bob", happiness: 80)
        let answer = try XCTUnwrap(page(seq: 9, first: 4, events: [first, second]))
        XCTAssertEqual(answer.room, "k")
        XCTAssertEqual(answer.epoch, "e1")
        XCTAssertEqual(answer.seq, 9)
        XCTAssertEqual(answer.first, 4)
        XCTAssertEqual(answer.events.map(\.text), [first, second])
        XCTAssertEqual(answer.events.map(\.event.seq), [4, 5])
        XCTAssertEqual(answer.events[1].event.sender.name, "bob")
        XCTAssertEqual(EventLines(offsetSeconds: 0).event(answer.events[0].event),
                       "00:00:01 #4 alice  dragon (1, 10) → (20, 10)  forwardButtonClicked:", "the line watch prints")
        XCTAssertNotNil(page(seq: 0, first: 1, events: []))
        XCTAssertNil(page(seq: 9, first: 4, events: [#"{"type":"event"}"#]), "an event without its fields")
        XCTAssertNil(HistoryAnswer(bytes: Array(#"{"room":"k","epoch":"e","seq":-1,"first":1,"events":[]}"#.utf8)))
    }

    func testAPastStateAndItsReport() throws {
        let text = #"{"room":"k","epoch":"e1","seq":3,"state":{"face":{"happiness":80,"smile":0.6,"scale":0.9},"#
            + ##""heart":{"rate":0.5,"fillColor":"#ff0000","strokeColor":"#000000","lineWidth":1},"##
            + #""dragon":{"x":30,"y":10,"hidden":false}},"dragonStatus":"forward, (x,y) = (30, 10)"}"#
        let past = try XCTUnwrap(PastStateAnswer(bytes: Array((text + "\n").utf8)))
        XCTAssertEqual(past.text, text, "the answer as the server wrote it")
        XCTAssertEqual(StateReport.past(past), """
            room     k   seq 3   epoch e1
            face     happiness 80 (smile 0.6)   scale 0.9
            heart    rate 0.5   fill #ff0000   stroke #000000   width 1
            dragon   (30, 10)   shown
            status   forward, (x,y) = (30, 10)
            """)
        XCTAssertNil(PastStateAnswer(bytes: Array(#"{"room":"k","epoch":"e1","seq":3}"#.utf8)))
    }

    func testPNGSizeReadsTheHeader() {
        var png = PNGSize.signature + [0, 0, 0, 13] + Array("IHDR".utf8)
        png += [0, 0, 3, 0xF7, 0, 0, 1, 0x4A]
        XCTAssertEqual(PNGSize(png).map { [$0.width, $0.height] }, [1015, 330])
        XCTAssertNil(PNGSize(Array("<html>not a picture at all</html>".utf8)))
    }

    // MARK: notes and failures

    func testHistoryNotes() {
        XCTAssertNil(HistoryNotes.start(since: nil, first: 40), "no since: from the oldest, nothing to say")
        XCTAssertNil(HistoryNotes.start(since: 39, first: 40))
        XCTAssertEqual(HistoryNotes.start(since: 38, first: 40), "history starts at seq 40 (event 39 is no longer held)")
        XCTAssertEqual(HistoryNotes.start(since: 10, first: 40), "history starts at seq 40 (events 11–39 are no longer held)")
        XCTAssertEqual(HistoryNotes.nothing(since: 12, roomSeq: 12), "no events after seq 12 (the room is at seq 12)")
        XCTAssertEqual(HistoryNotes.nothing(since: nil, roomSeq: 0), "no events held (the room is at seq 0)")
        let png = PNGSize.signature + [0, 0, 0, 13] + Array("IHDR".utf8) + [0, 0, 1, 0x77, 0, 0, 0, 0xB4]
        XCTAssertEqual(HistoryNotes.wrote(FrameOptions(output: "a.png", seq: 5), png: png),
                       "wrote a.png: scene at seq 5, 375×180 pixels, 24 bytes")
        XCTAssertEqual(HistoryNotes.wrote(FrameOptions(view: .dragon, output: "d.png"), png: png),
                       "wrote d.png: dragon, 375×180 pixels, 24 bytes")
    }

    func testHTTPFailuresAreWordedAndCodedLikeSessionErrors() {
        let url = "http://127.0.0.1:8080/api/state?seq=3"
        let gone = HTTPFailure.refusal(url: url, status: 410, body: Array(
            #"{"type":"error","code":"gone","message":"seq 3 is no longer held: the history of this room starts at 50"}"#.utf8))
        XCTAssertEqual(gone.description, "refused by the server: gone: seq 3 is no longer held: the history of this room starts at 50")
        XCTAssertEqual(gone.exitStatus, .refused)
        XCTAssertEqual(gone.status, 410)
        let bare = HTTPFailure.refusal(url: url, status: 502, body: Array("Bad Gateway".utf8))
        XCTAssertEqual(bare.description, "refused by the server: HTTP 502 from \(url)")
        XCTAssertEqual(HTTPFailure.cannotConnect(url: url, reason: "Connection refused").description,
                       "cannot connect to \(url): Connection refused")
        XCTAssertEqual(HTTPFailure.cannotConnect(url: url, reason: "x").exitStatus, .cannotConnect)
        XCTAssertEqual(HTTPFailure.timeout(url: url, seconds: 2).description, "timeout: no answer from \(url) within 2 s")
        XCTAssertEqual(HTTPFailure.timeout(url: url, seconds: 2).exitStatus, .timeout)
    }

    func testURLsCarryTheRoomAndTheSetParameters() {
        let common = CommonOptions(url: WebSocketURL("ws://h:81/ws")!, room: "kitchen")
        XCTAssertEqual(ServerHTTP(common: common).url("/api/history", [("since", "4"), ("limit", nil)]),
                       "http://h:81/api/history?room=kitchen&since=4")
        XCTAssertEqual(ServerHTTP(common: CommonOptions(url: WebSocketURL("wss://h/")!)).url("/frame/scene.png"),
                       "https://h:443/frame/scene.png")
    }

    // MARK: replay

    func testReplayPauses() {
        let pace = ReplayPace(speed: 4)
        XCTAssertEqual(pace.pause(from: nil, to: 5_000), ReplayPace.startHold, "the start is shown a moment")
        XCTAssertEqual(pace.pause(from: 1_000, to: 3_000), 0.5, "two seconds at 4×")
        XCTAssertEqual(pace.pause(from: 1_000, to: 60_000), 1, "long pauses last a second")
        XCTAssertEqual(pace.pause(from: 3_000, to: 1_000), 0, "a clock that went back")
        XCTAssertEqual(ReplayPace(speed: 1).pause(from: 0, to: 400), 0.4)
    }

    func testReplayProgressFollowsTheEventsAndTheLabel() throws {
        let startText = #"{"room":"k","epoch":"e1","seq":2,"state":{"face":{"happiness":50,"smile":0,"scale":0.9},"#
            + ##""heart":{"rate":0.5,"fillColor":"#ff0000","strokeColor":"#000000","lineWidth":1},"##
            + #""dragon":{"x":10,"y":10,"hidden":false}},"dragonStatus":"dragon's status"}"#
        let start = try XCTUnwrap(PastStateAnswer(bytes: Array(startText.utf8)))
        var progress = ReplayProgress(start: start, target: 9, speed: 4)
        XCTAssertEqual(progress.line, "replay seq 2 of 9 at 4×")
        XCTAssertEqual(progress.statusLabel, "dragon's status")
        progress.apply(event(eventText(seq: 3, time: 0, sender: "bob", dragonX: "20")), status: DragonStatus())
        XCTAssertEqual(progress.statusLabel, "bob: forward, (x,y) = (20, 10)")
        XCTAssertEqual(progress.drawnStatus, "forward, (x,y) = (20, 10)")
        progress.apply(event(eventText(seq: 4, time: 0, name: "faceView:didChangeHappiness:", happiness: 90, dragonX: "20")),
                       status: DragonStatus())
        XCTAssertEqual(progress.scene.face.happiness, 90)
        XCTAssertEqual(progress.statusLabel, "bob: forward, (x,y) = (20, 10)", "a face event leaves the label")
        XCTAssertEqual(progress.line, "replay seq 4 of 9 at 4×")
        XCTAssertEqual(ReplayProgress(start: start, target: 9, speed: 0.5).line, "replay seq 2 of 9 at 0.5×")
    }

    func testThePlayerShowsEachEventWhenItIsDueThenEnds() throws {
        let startText = #"{"room":"k","epoch":"e1","seq":0,"state":{"face":{"happiness":50,"smile":0,"scale":0.9},"#
            + ##""heart":{"rate":0.5,"fillColor":"#ff0000","strokeColor":"#000000","lineWidth":1},"##
            + #""dragon":{"x":10,"y":10,"hidden":false}},"dragonStatus":"dragon's status"}"#
        let start = try XCTUnwrap(PastStateAnswer(bytes: Array(startText.utf8)))
        let events = [eventText(seq: 1, time: 10_000, happiness: 60), eventText(seq: 2, time: 12_000, happiness: 70),
                      eventText(seq: 3, time: 99_000, happiness: 80)]
        let first = try XCTUnwrap(page(seq: 3, first: 1, events: events))
        let feed = ReplayFeed(api: HistoryAPI(common: CommonOptions()), first: first, start: 0, target: 3, wake: {})
        var player = ReplayPlayer(progress: ReplayProgress(start: start, target: 3, speed: 2), feed: feed,
                                  status: DragonStatus(), now: 100)
        XCTAssertTrue(player.advance(now: 100.5))
        XCTAssertEqual(player.progress.seq, 0, "the start is held for a second")
        XCTAssertEqual(player.nextDue, 101)
        XCTAssertTrue(player.advance(now: 101))
        XCTAssertEqual(player.progress.seq, 1)
        XCTAssertEqual(player.nextDue, 102, "two seconds at 2×")
        XCTAssertTrue(player.advance(now: 102.1))
        XCTAssertEqual(player.progress.scene.face.happiness, 70)
        XCTAssertEqual(player.nextDue, 103, "87 seconds at 2× are cut to one")
        XCTAssertFalse(player.advance(now: 103), "the last event shown, the replay is over")
        XCTAssertEqual(player.progress.seq, 3)
        XCTAssertNil(feed.failure)
    }

    func testTheReplayScreenShowsItsLineAndKeys() {
        let texts = PlayScreen.texts(room: "t", url: "ws://h:1/ws", you: Participant(id: "c1", name: "me"),
                                     connection: "connected", seq: 12, scene: .standard, statusLabel: "dragon's status",
                                     lastAnswer: nil, presence: [], presenceCount: 1, steering: "steering: nobody",
                                     replay: "replay seq 3 of 9 at 4×")
        XCTAssertEqual(texts.title, " Happy · room t · me · replay seq 3 of 9 at 4× · connected")
        XCTAssertEqual(texts.keys, PlayScreen.replayKeys)
        let live = PlayScreen.texts(room: "t", url: "ws://h:1/ws", you: nil, connection: "connected", seq: 12, scene: nil,
                                    statusLabel: "", lastAnswer: nil, presence: [], presenceCount: 1, steering: "")
        XCTAssertEqual(live.title, " Happy · room t · ws://h:1/ws · connected · seq 12")
        XCTAssertEqual(live.keys, PlayKeys.help)
    }
}
