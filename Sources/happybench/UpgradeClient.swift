import Foundation
import HappyCore

/// What the clients of the upgrade workload saw; touched on their loop's
/// thread (one loop per tally), read once everything has stopped.
final class UpgradeTally: @unchecked Sendable {
    var welcomes = 0
    /// Welcomes after a reconnect, and those of them that resumed (`recovered: true`).
    var rejoins = 0
    var recovered = 0
    /// Connections refused or failed before a welcome (a connection attempt that did not get in).
    var refused = 0
    var firstRefusal: String?
    /// Closes other than 1012, after a welcome.
    var dropped = 0
    var firstDrop: String?
    /// 1012 closes seen.
    var restarts = 0
    /// An event or tick that did not follow the last seq the client had.
    var gaps = 0
    var firstGap: String?
    var errors = 0
    var firstError: String?
    /// Every ack: writer, its intent's id, the seq, and when (monotonic ns).
    var acks: [(writer: Int, id: String, seq: UInt64, result: String, at: UInt64)] = []
}

/// One of the upgrade workload's clients: joins its room, follows its seq
/// event by event, writes intents when it is a writer, and on 1012 rejoins
/// within 250 ms with `since` and `epoch`, as PROTOCOL.md section 2 says.
final class UpgradeClient: SocketClient, @unchecked Sendable {
    let index: Int
    let room: String
    let writer: Int?
    private unowned let workload: UpgradeWorkload
    private let tally: UpgradeTally
    private(set) var link: CrowdSocket?
    private var welcomed = false
    private var reconnecting = false
    private(set) var lastSeq: UInt64 = 0
    private var epoch = ""
    private var sent = 0

    init(index: Int, room: String, writer: Int?, workload: UpgradeWorkload, tally: UpgradeTally) {
        self.index = index
        self.room = room
        self.writer = writer
        self.workload = workload
        self.tally = tally
    }

    var name: String { writer.map { "writer\($0)" } ?? "reader\(index)" }

    /// Opens its connection (again, after a restart, with where it was).
    func connect() {
        var path = "/ws?room=\(room)&name=\(name)"
        if reconnecting { path += "&since=\(lastSeq)&epoch=\(epoch)" }
        welcomed = false
        link = workload.loop(for: index).open(self, port: workload.port, path: path)
    }

    /// Sends the next intent (writers only), from the workload's pacer via the loop.
    func sendIntent() {
        guard let writer, welcomed, let link else { return }
        sent += 1
        let action = sent % 2 == 0 ? "dragon.back" : "dragon.forward"
        link.send(text: #"{"type":"intent","id":"w\#(writer)-\#(sent)","action":"\#(action)"}"#)
    }

    func receive(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 12 else { return }
        switch (bytes[9], bytes[10]) {
        case (UInt8(ascii: "w"), _): welcome(bytes)
        case (UInt8(ascii: "e"), UInt8(ascii: "v")): follow(bytes, from: nil)
        case (UInt8(ascii: "t"), _): tick(bytes)
        case (UInt8(ascii: "a"), _): ack(bytes)
        case (UInt8(ascii: "r"), _):
            // A resync jumps; the protocol allows it for a client that fell behind, which these never do.
            note(&tally.gaps, &tally.firstGap, "client \(index) was resynced")
        case (UInt8(ascii: "e"), _):
            note(&tally.errors, &tally.firstError, String(decoding: bytes.prefix(200), as: UTF8.self))
        default:
            break
        }
    }

    func ended(_ why: String, closeCode: Int?) {
        guard !workload.isClosing else { return }
        if closeCode == Int(WebSocketCloseCode.serviceRestart.rawValue) {
            tally.restarts += 1
            reconnecting = true
            workload.after(Double.random(in: 0..<0.25)) { [self] in workload.loop(for: index).perform { [self] in connect() } }
        } else if welcomed {
            note(&tally.dropped, &tally.firstDrop, "client \(index): \(why)")
        } else {
            note(&tally.refused, &tally.firstRefusal, "client \(index): \(why)")
            // Counted; try again so that the rest of the run still measures something.
            workload.after(0.1) { [self] in workload.loop(for: index).perform { [self] in connect() } }
        }
    }

    private static let seqKey = Array(#""seq":"#.utf8)
    private static let fromKey = Array(#""from":"#.utf8)
    private static let idKey = Array(#""id":""#.utf8)
    private static let resultKey = Array(#""result":""#.utf8)

    private func welcome(_ bytes: UnsafeRawBufferPointer) {
        guard let json = try? JSONParser.parse(Array(bytes)), let seq = json["seq"]?.doubleValue else {
            return note(&tally.errors, &tally.firstError, "an unreadable welcome")
        }
        welcomed = true
        tally.welcomes += 1
        epoch = json["epoch"]?.stringValue ?? epoch
        if reconnecting {
            tally.rejoins += 1
            // Recovered: the missed events follow, from lastSeq + 1.
            if json["recovered"]?.boolValue == true {
                tally.recovered += 1
            } else {
                lastSeq = UInt64(seq)
            }
        } else {
            lastSeq = UInt64(seq)
            workload.didWelcome()
        }
    }

    /// An event (or a tick from `from`): the next seq, or a gap.
    private func follow(_ bytes: UnsafeRawBufferPointer, from: UInt64?) {
        guard let seq = MessageScan.unsigned(after: Self.seqKey, in: bytes, from: 0)?.value else { return }
        let first = from ?? seq
        if first != lastSeq + 1 && seq > lastSeq {
            note(&tally.gaps, &tally.firstGap, "client \(index) had \(lastSeq), got \(first)...\(seq)")
        }
        lastSeq = max(lastSeq, seq)
    }

    private func tick(_ bytes: UnsafeRawBufferPointer) {
        guard let from = MessageScan.unsigned(after: Self.fromKey, in: bytes, from: 0) else { return }
        follow(UnsafeRawBufferPointer(rebasing: bytes[from.end...]), from: from.value)
    }

    private func ack(_ bytes: UnsafeRawBufferPointer) {
        guard let writer, let idStart = MessageScan.find(Self.idKey, in: bytes, from: 0),
              let idEnd = (idStart..<bytes.count).first(where: { bytes[$0] == UInt8(ascii: "\"") }),
              let seq = MessageScan.unsigned(after: Self.seqKey, in: bytes, from: idEnd),
              let resultStart = MessageScan.find(Self.resultKey, in: bytes, from: seq.end) else { return }
        let id = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[idStart..<idEnd]), as: UTF8.self)
        let result = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[resultStart...])
            .prefix(while: { $0 != UInt8(ascii: "\"") }), as: UTF8.self)
        tally.acks.append((writer, id, seq.value, result, CrowdDriver.now()))
    }

    private func note(_ count: inout Int, _ first: inout String?, _ what: String) {
        count += 1
        if first == nil { first = what }
    }
}
