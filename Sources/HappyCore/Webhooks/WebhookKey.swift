/// A webhook's identity in the routing, the deliveries, the senders and the
/// outboxes: derived from its URL alone, so a list reordered by a reload, a
/// restart or an upgrade keeps each receiver's queue, and the same URL names
/// the same queue on every node.
///
/// The key is the 64-bit FNV-1a hash of the URL's UTF-8 with the top bit
/// cleared (a positive Int64: SQLite's INTEGER column holds it) and bit 62
/// set, so it is never a small number: older builds keyed the outbox by the
/// webhook's position in the list, and a key below `smallest` is such a
/// position. Two different URLs share a key with a chance of about 2^-62.
/// The value is stored: changing the function would orphan queued deliveries.
public enum WebhookKey {
    /// Every key is at least this; anything below it in an outbox is a list position.
    public static let smallest = 1 << 62

    /// The key of the webhook at `url`.
    public static func of(url: String) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in url.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return Int(hash & UInt64(Int.max)) | smallest
    }
}
