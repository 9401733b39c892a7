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
    /// Intents refused `unavailable` while the store changed hands (nothing applied), sent again after the rejoin.
    var resent = 0
    /// When writers saw 1012, and when they were welcomed back (monotonic ns).
    var writerRestarts: [UInt64] = []
    var writerRejoins: [UInt64] = []
    /// When those writers started connecting again (monotonic ns), beside `writerRejoins`.
    var writerReconnectStarts: [UInt64] = []
    /// When each intent was last sent, by id (monotonic ns).
    var sentAt: [String: UInt64] = [:]
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
    /// Intents to send once welcomed: refused while the store changed hands, or due while away.
    private var owed: [(id: String, text: String)] = []
    private var connectStartedAt: UInt64 = 0

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
        connectStartedAt = CrowdDriver.now()
        link = workload.loop(for: index).open(self, port: workload.port, path: path)
    }

    /// Sends the next intent (writers only), from the workload's pacer via the loop;
    /// while away, as a person's client would, it is sent on the rejoin.
    func sendIntent() {
        guard let writer else { return }
        sent += 1
        let intent = IntentEncoder.intent(sent % 2 == 0 ? .dragonBack : .dragonForward, id: "w\(writer)-\(sent)")
        guard welcomed, let link else {
            if owed.count < 2 { owed.append((id: "w\(writer)-\(sent)", text: intent)) }
            return
        }
        send(id: "w\(writer)-\(sent)", intent, on: link)
    }

    private func send(id: String, _ intent: String, on link: CrowdSocket) {
        tally.sentAt[id] = CrowdDriver.now()
        link.send(text: intent)
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
            refused(String(decoding: bytes, as: UTF8.self))
        default:
            break
        }
    }

    func ended(_ why: String, closeCode: Int?) {
        guard !workload.isClosing else { return }
        if closeCode == Int(WebSocketCloseCode.serviceRestart.rawValue) {
            tally.restarts += 1
            if writer != nil { tally.writerRestarts.append(CrowdDriver.now()) }
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
            if writer != nil {
                tally.writerRejoins.append(CrowdDriver.now())
                tally.writerReconnectStarts.append(connectStartedAt)
            }
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
        if let link { for intent in owed { send(id: intent.id, intent.text, on: link) } }
        owed.removeAll()
    }

    /// An error: `unavailable` during an upgrade says nothing was applied, so the intent is sent
    /// again after the rejoin (same id); anything else is counted as an error.
    private func refused(_ text: String) {
        guard text.contains(#""code":"unavailable""#), let json = try? JSONParser.parse(Array(text.utf8)),
              let id = json["id"]?.stringValue, let writer, id.hasPrefix("w\(writer)-") else {
            return note(&tally.errors, &tally.firstError, String(text.prefix(200)))
        }
        tally.resent += 1
        let action: Action = (Int(id.dropFirst("w\(writer)-".count)) ?? 1) % 2 == 0 ? .dragonBack : .dragonForward
        owed.append((id: id, text: IntentEncoder.intent(action, id: id)))
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
