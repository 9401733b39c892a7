import Foundation
import HappyCore

/// The name of the user running happyclient, the display name of the
/// commands that act when no `--name` is given: `USER`, else `LOGNAME`,
/// else the password database's entry for the process's user.
enum LoginName {
    static func current(environment: [String: String]) -> String? {
        from(environment: environment, database: { getpwuid(getuid()).map { String(cString: $0.pointee.pw_name) } })
    }

    /// The first of them that is a valid display name; nil lets the server choose.
    static func from(environment: [String: String], database: () -> String?) -> String? {
        for candidate in [environment["USER"], environment["LOGNAME"]] {
            if let candidate, Names.isValidDisplayName(candidate) { return candidate }
        }
        return database().flatMap { Names.isValidDisplayName($0) ? $0 : nil }
    }
}
