import HappyCore

/// Hears what happens in a `HappySession`'s room, one call at a time in the
/// room's order, on the task that reads the connection (on the main actor
/// when `SessionConfiguration.deliversOnMainActor`). Every method has an
/// empty default. The session holds its delegate weakly.
public protocol HappySessionDelegate: AnyObject {
    /// A welcome arrived: on the first connection and after each reconnect.
    func session(_ session: HappySession, didJoin welcome: WelcomeMessage, outcome: ResumeOutcome)
    /// A new event (replays of events already passed on are left out);
    /// `text` is the message exactly as received.
    func session(_ session: HappySession, didReceive event: EventMessage, text: String)
    /// Someone joined or left the room.
    func session(_ session: HappySession, presence change: PresenceChange, text: String)
    /// The server replaced queued events by the current state.
    func session(_ session: HappySession, didResync seq: UInt64, state: Scene, text: String)
    /// A tick: every event from `tick.from` to `tick.seq` in one message (section 12).
    func session(_ session: HappySession, didReceive tick: TickMessage, text: String)
    /// A tick started past the next seq: the events in `range` never arrived
    /// (the tick's state is current). Called just before that tick.
    func session(_ session: HappySession, missed range: ClosedRange<UInt64>, before tick: TickMessage)
    /// The room switched between one message per event and ticks.
    func session(_ session: HappySession, didChangeDelivery mode: DeliveryMode, tickMs: Int)
    /// The others' pointers changed: a welcome listed them, a `pointers`
    /// batch came (`text` is that message as received, even when it changed
    /// nothing this client showed), a client left, or the connection dropped.
    func session(_ session: HappySession, didUpdatePointers update: PointerUpdate, text: String?)
    /// An error answer that belongs to no request of this session.
    func session(_ session: HappySession, didReceiveError error: WireError)
    /// The connection state changed.
    func session(_ session: HappySession, didChange state: ConnectionState)
}

extension HappySessionDelegate {
    /// Does nothing by default.
    public func session(_ session: HappySession, didJoin welcome: WelcomeMessage, outcome: ResumeOutcome) {}
    /// Does nothing by default.
    public func session(_ session: HappySession, didReceive event: EventMessage, text: String) {}
    /// Does nothing by default.
    public func session(_ session: HappySession, presence change: PresenceChange, text: String) {}
    /// Does nothing by default.
    public func session(_ session: HappySession, didResync seq: UInt64, state: Scene, text: String) {}
    /// Does nothing by default.
    public func session(_ session: HappySession, didReceive tick: TickMessage, text: String) {}
    /// Does nothing by default.
    public func session(_ session: HappySession, missed range: ClosedRange<UInt64>, before tick: TickMessage) {}
    /// Does nothing by default.
    public func session(_ session: HappySession, didChangeDelivery mode: DeliveryMode, tickMs: Int) {}
    /// Does nothing by default.
    public func session(_ session: HappySession, didUpdatePointers update: PointerUpdate, text: String?) {}
    /// Does nothing by default.
    public func session(_ session: HappySession, didReceiveError error: WireError) {}
    /// Does nothing by default.
    public func session(_ session: HappySession, didChange state: ConnectionState) {}
}

/// A consistent copy of a session's knowledge at one moment.
public struct SessionSnapshot: Sendable {
    /// The room as the session knows it: epoch, seq, scene and presence.
    public var ledger: RoomLedger
    /// The others' visible pointers, by id.
    public var pointers: [String: PointerEntry]
    /// The connection's state; nil before `start()`.
    public var connectionState: ConnectionState?
    /// The latest welcome, decoded and as parsed JSON.
    public var welcome: WelcomeMessage?
    /// The latest welcome as parsed JSON; nil before the first.
    public var welcomeJSON: JSONValue?
    /// The scene's and the dragon's sizes and the dragon's step, from the latest welcome
    /// that gave them (the defaults before).
    public var geometry: SceneGeometry
    /// The server's intent and message limits, from the latest welcome; nil when it gave none.
    public var limits: WelcomeLimits?
    /// Server clock minus local clock, in milliseconds (nil before a welcome).
    public var clockOffsetMilliseconds: Double?

    /// The server's clock now, in milliseconds, as far as the session can tell.
    public var estimatedServerTime: Int64 {
        Int64((Double(SystemTime.wallMilliseconds()) + (clockOffsetMilliseconds ?? 0)).rounded())
    }
}
