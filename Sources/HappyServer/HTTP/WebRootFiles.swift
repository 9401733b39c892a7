import Foundation

/// Static files are served only from inside `webRoot`: a symbolic link (or
/// a path lws would follow) whose target lies outside it is not served.
struct WebRootFiles {
    /// `webRoot` with every link resolved, ending in `/`.
    private let root: String

    init(webRoot: String) {
        let real = Self.realPath(webRoot) ?? webRoot
        root = real.hasSuffix("/") ? real : real + "/"
    }

    /// Whether the file for request `path` may be served: it does not exist
    /// (lws answers 404), or its real path lies inside `webRoot`.
    func allows(_ path: String) -> Bool {
        let relative = path.hasSuffix("/") ? path + "index.html" : path
        guard let real = Self.realPath(root + relative.drop { $0 == "/" }) else { return true }
        return real.hasPrefix(root)
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
