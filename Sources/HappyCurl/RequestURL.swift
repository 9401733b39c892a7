import CCurl

/// A request's URL as libcurl parses it: its host and port, for messages
/// that name where a request could not go.
struct RequestURL {
    var host: String
    var port: Int

    /// `127.0.0.1:8080`, `[::1]:443`
    var endpoint: String { "\(host):\(port)" }

    /// The parsed URL, or why it is not an `http://` or `https://` one.
    static func parse(_ url: String) -> Result<RequestURL, HTTPClientError> {
        guard let handle = curl_url() else { return .failure(.setupFailed(reason: "curl_url: out of memory")) }
        defer { curl_url_cleanup(handle) }
        let parsed = curl_url_set(handle, CURLUPART_URL, url, 0)
        guard parsed == CURLUE_OK else {
            return .failure(.invalidURL(url: url, reason: String(cString: curl_url_strerror(parsed))))
        }
        let scheme = part(handle, CURLUPART_SCHEME)?.lowercased()
        guard scheme == "http" || scheme == "https" else {
            return .failure(.invalidURL(url: url, reason: "not http or https"))
        }
        guard let host = part(handle, CURLUPART_HOST), !host.isEmpty,
              let port = part(handle, CURLUPART_PORT, flags: UInt32(CURLU_DEFAULT_PORT)).flatMap({ Int($0) }) else {
            return .failure(.invalidURL(url: url, reason: "no host"))
        }
        return .success(RequestURL(host: host, port: port))
    }

    private static func part(_ handle: OpaquePointer, _ which: CURLUPart, flags: UInt32 = 0) -> String? {
        var text: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, which, &text, flags) == CURLUE_OK, let text else { return nil }
        defer { curl_free(text) }
        return String(cString: text)
    }
}
