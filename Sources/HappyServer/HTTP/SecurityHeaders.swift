/// The headers that tell browsers what the server's answers are and what a
/// page of it may do: nothing is sniffed into another type, no address leaks
/// in a `Referer`, the pages run only the server's own scripts and styles
/// (a content security policy with no inline script), the inspector is
/// never framed, and under TLS browsers stay on HTTPS (HSTS).
struct SecurityHeaders: Sendable {
    typealias Header = (name: String, value: String)

    /// Sources every page of the server keeps to: its own files, canvases and frames.
    private static let pagePolicy = "default-src 'self'; script-src 'self'; style-src 'self'; "
        + "img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'"

    let tls: Bool

    /// On every answer.
    var common: [Header] {
        var headers: [Header] = [("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer")]
        if tls { headers.append(("Strict-Transport-Security", "max-age=31536000")) }
        return headers
    }

    /// Besides the common ones, on the page (`index.html` and the other HTML
    /// files): framed only by the server's own pages.
    var page: [Header] {
        [("Content-Security-Policy", Self.pagePolicy + "; frame-ancestors 'self'"), ("X-Frame-Options", "SAMEORIGIN")]
    }

    /// Besides the common ones, on `/admin`: never framed, so that no page can overlay the operator's buttons.
    var inspector: [Header] {
        [("Content-Security-Policy", Self.pagePolicy + "; frame-ancestors 'none'"), ("X-Frame-Options", "DENY")]
    }

    /// A static file's headers, by its path: the common ones, and a page's for HTML (and `/`);
    /// the inspector's file is never framed, whichever address it is asked by.
    func file(path: String) -> [Header] {
        if path == "/admin.html" { return common + inspector }
        return path.hasSuffix("/") || path.hasSuffix(".html") ? common + page : common
    }
}
