import Foundation

/// The few figures a crowd client needs, read straight from a message's
/// bytes instead of decoding its JSON: the server writes `"type"` first and
/// the other keys in a fixed order, so a key is found right where it is
/// looked for. Nothing here allocates.
enum MessageScan {
    /// The index just past the first `key` at or after `start` (memchr to its first byte, then compare).
    static func find(_ key: [UInt8], in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard let first = key.first, start >= 0, let base = bytes.baseAddress else { return nil }
        let last = bytes.count - key.count
        var index = start
        while index <= last {
            guard let hit = memchr(base + index, Int32(first), last - index + 1) else { return nil }
            index = base.distance(to: UnsafeRawPointer(hit))
            if matches(key, in: bytes, at: index) { return index + key.count }
            index += 1
        }
        return nil
    }

    /// The unsigned integer that starts at `index`, and the index after it.
    static func unsigned(in bytes: UnsafeRawBufferPointer, at index: Int) -> (value: UInt64, end: Int)? {
        var position = index
        var value: UInt64 = 0
        while position < bytes.count {
            let digit = bytes[position] &- 0x30
            guard digit <= 9 else { break }
            value = value &* 10 &+ UInt64(digit)
            position += 1
        }
        return position > index ? (value, position) : nil
    }

    /// The unsigned integer after the first `key` at or after `start`.
    static func unsigned(after key: [UInt8], in bytes: UnsafeRawBufferPointer,
                         from start: Int) -> (value: UInt64, end: Int)? {
        guard let at = find(key, in: bytes, from: start) else { return nil }
        return unsigned(in: bytes, at: at)
    }

    /// Whether `key` is at exactly `index`.
    static func matches(_ key: [UInt8], in bytes: UnsafeRawBufferPointer, at index: Int) -> Bool {
        guard index >= 0, index + key.count <= bytes.count else { return false }
        for offset in 0..<key.count where bytes[index + offset] != key[offset] { return false }
        return true
    }
}
