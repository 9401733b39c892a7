/// A message for one client only (welcome, ack, error, pong, replayed
/// event), placed among the room's broadcasts: it goes out once the client
/// has written every broadcast before position `after`.
struct PrivateMessage {
    let after: UInt64
    let frame: OutboundFrame
}
