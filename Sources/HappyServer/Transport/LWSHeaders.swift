import CWebSockets
import Glibc

/// Reading request data from lws (only valid while lws still holds the headers).
enum LWSHeaders {
    static func value(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        let length = Int(lws_hdr_total_length(wsi, token))
        guard length > 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        guard lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token) >= 0 else { return nil }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Tokens of the headers lws parses itself, by lower-case name.
    private static let tokens: [String: lws_token_indexes] = [
        "authorization": WSI_TOKEN_HTTP_AUTHORIZATION, "if-none-match": WSI_TOKEN_HTTP_IF_NONE_MATCH,
        "origin": WSI_TOKEN_ORIGIN, "x-forwarded-for": WSI_TOKEN_X_FORWARDED_FOR,
        "content-length": WSI_TOKEN_HTTP_CONTENT_LENGTH,
    ]

    /// A header by lower-case name, whether lws has a token for it or not.
    static func named(_ wsi: OpaquePointer, _ name: String) -> String? {
        if let token = tokens[name] { return value(wsi, token) }
        return custom(wsi, name)
    }

    /// A header lws has no token for, named in lower case (`x-happy-name`).
    static func custom(_ wsi: OpaquePointer, _ name: String) -> String? {
        let key = name.lowercased() + ":"
        let keyLength = Int32(key.utf8.count)
        let length = Int(lws_hdr_custom_length(wsi, key, keyLength))
        guard length > 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        guard lws_hdr_custom_copy(wsi, &buffer, Int32(buffer.count), key, keyLength) >= 0 else { return nil }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The query arguments, already URL-decoded by lws; the first of a name wins.
    static func queryArguments(_ wsi: OpaquePointer) -> [String: String] {
        var arguments: [String: String] = [:]
        var index: Int32 = 0
        while true {
            // Sized per fragment: a fixed buffer would silently end the list at a long argument.
            var buffer = [CChar](repeating: 0, count: Int(lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, index)) + 1)
            guard lws_hdr_copy_fragment(wsi, &buffer, Int32(buffer.count), WSI_TOKEN_HTTP_URI_ARGS, index) >= 0 else { break }
            index += 1
            let fragment = String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard !fragment.isEmpty else { continue }
            let parts = fragment.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            if arguments[name] == nil { arguments[name] = parts.count > 1 ? String(parts[1]) : "" }
        }
        return arguments
    }

    /// lws ends the request line at a CR or LF even when it was decoded from
    /// `%0D` or `%0A` in the target: the target is cut there and the rest of
    /// the line, with the HTTP version, is lost (after `%0A` so is the next
    /// header line, usually `Host`). A request line without an HTTP version
    /// is such a cut line (or HTTP/0.9, refused as well).
    static func requestLineIsCut(_ wsi: OpaquePointer) -> Bool {
        lws_hdr_total_length(wsi, WSI_TOKEN_HTTP) == 0
    }

    static func peerAddress(_ wsi: OpaquePointer) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        guard lws_get_peer_simple(wsi, &buffer, buffer.count) != nil else { return "?" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The request method and path of an HTTP request.
    static func methodAndPath(_ wsi: OpaquePointer) -> (method: String, path: String)? {
        let candidates: [(String, lws_token_indexes)] = [
            ("GET", WSI_TOKEN_GET_URI), ("POST", WSI_TOKEN_POST_URI), ("HEAD", WSI_TOKEN_HEAD_URI),
            ("PUT", WSI_TOKEN_PUT_URI), ("DELETE", WSI_TOKEN_DELETE_URI), ("PATCH", WSI_TOKEN_PATCH_URI),
            ("OPTIONS", WSI_TOKEN_OPTIONS_URI),
        ]
        for (method, token) in candidates {
            if let path = value(wsi, token) { return (method, path) }
        }
        return nil
    }

    /// The text form of an accepted socket's address.
    static func addressText(_ storage: sockaddr_storage) -> String {
        var copy = storage
        var buffer = [CChar](repeating: 0, count: 64)
        withUnsafeBytes(of: &copy) { raw in
            if storage.ss_family == sa_family_t(AF_INET6) {
                var address = raw.load(as: sockaddr_in6.self).sin6_addr
                _ = inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count))
            } else {
                var address = raw.load(as: sockaddr_in.self).sin_addr
                _ = inet_ntop(AF_INET, &address, &buffer, socklen_t(buffer.count))
            }
        }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
