import Foundation
import HappyCore
import HappyRender

/// What identifies one rendered frame: the room's state (epoch, seq), the
/// view, the size and the wave step (0 for views without the wave).
struct FrameKey: Hashable, Sendable {
    let room: String
    let epoch: String
    let seq: UInt64
    let view: FrameView
    let width: Int
    let height: Int
    let step: Int
    /// Asked for by seq (`?seq=N`): cached and tagged apart from the present frame.
    var isPast = false

    /// `"<epoch>-<seq>-<view>-<w>x<h>-<step>"` (`p-` first for a past frame), quoted as HTTP wants.
    var etag: String { "\"\(isPast ? "p-" : "")\(epoch)-\(seq)-\(view.rawValue)-\(width)x\(height)-\(step)\"" }
}

/// `If-None-Match` handling (RFC 9110 section 13.1.2, weak comparison).
enum EntityTag {
    /// Whether an `If-None-Match` header value matches `etag`: `*`, or one
    /// of a comma-separated list of tags, `W/` prefixes ignored.
    static func header(_ ifNoneMatch: String, matches etag: String) -> Bool {
        let wanted = strip(etag)
        for candidate in ifNoneMatch.split(separator: ",") {
            let tag = candidate.trimmingCharacters(in: .whitespaces)
            if tag == "*" || strip(tag) == wanted { return true }
        }
        return false
    }

    private static func strip(_ tag: String) -> String {
        tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag
    }
}
