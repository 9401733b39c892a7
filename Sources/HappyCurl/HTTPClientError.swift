import CCurl

/// Why an HTTP request got no answer: what failed, with libcurl's or the
/// system's reason; `description` adds what to check.
public enum HTTPClientError: Error, Equatable, CustomStringConvertible {
    /// libcurl could not be initialized or refused an option.
    case setupFailed(reason: String)
    /// Not an `http://` or `https://` URL.
    case invalidURL(url: String, reason: String)
    case cannotResolve(host: String, reason: String)
    /// No connection to `endpoint` (`127.0.0.1:8080`): refused, unreachable.
    case cannotConnect(endpoint: String, reason: String)
    /// The server's certificate does not lead to a trusted CA or does not name the host.
    case untrustedCertificate(endpoint: String, reason: String)
    /// Any other failure of the TLS handshake, or of the CA files given.
    case tlsFailed(endpoint: String, reason: String)
    /// No complete answer within the request's timeout.
    case timedOut(url: String, seconds: Double)
    /// The connection ended or failed before the whole answer arrived.
    case connectionBroken(url: String, reason: String)
    /// The server answered something other than HTTP.
    case invalidAnswer(url: String, reason: String)
    case answerTooLarge(url: String, limit: Int)
    /// Any other libcurl error, with its code.
    case failed(url: String, code: Int, reason: String)

    public var description: String {
        switch self {
        case .setupFailed(let reason):
            return "libcurl could not be set up (\(reason)): is libcurl4 installed and working?"
        case .invalidURL(let url, let reason):
            return "cannot request \(url) (\(reason)): give an http:// or https:// URL"
        case .cannotResolve(let host, let reason):
            return "could not resolve \(host) (\(reason)): check the host name and the network"
        case .cannotConnect(let endpoint, let reason):
            return "could not connect to \(endpoint) (\(reason)): is the server running and listening there?"
        case .untrustedCertificate(let endpoint, let reason):
            return "the certificate of \(endpoint) is not trusted (\(reason)): "
                + "give its CA certificate as caFile (SSL_CERT_FILE)"
        case .tlsFailed(let endpoint, let reason):
            return "TLS with \(endpoint) failed (\(reason)): does it serve https on that port?"
        case .timedOut(let url, let seconds):
            return "no complete answer from \(url) within \(Self.seconds(seconds)) s: "
                + "is the server stuck, or the timeout too short?"
        case .connectionBroken(let url, let reason):
            return "the connection to \(url) broke before the whole answer (\(reason)): try again"
        case .invalidAnswer(let url, let reason):
            return "\(url) did not answer in HTTP (\(reason)): is it an HTTP server?"
        case .answerTooLarge(let url, let limit):
            return "the answer from \(url) is larger than \(limit) bytes: raise maxResponseBytes"
        case .failed(let url, let code, let reason):
            return "the request to \(url) failed (libcurl error \(code): \(reason))"
        }
    }

    /// `4` rather than `4.0`.
    private static func seconds(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

/// What a failed `curl_easy_perform` came to, in the terms of `HTTPClientError`.
struct PerformFailure {
    var code: CURLcode
    /// libcurl's error buffer, or else its text for `code`.
    var message: String
    /// The system's reason for a failed connect (`Connection refused`), if any.
    var systemReason: String?
    var target: RequestURL
    var request: HTTPClientRequest
    var bodyOverflowed: Bool

    var error: HTTPClientError {
        let url = request.url
        switch code {
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT:
            return .invalidURL(url: url, reason: message)
        case CURLE_COULDNT_RESOLVE_HOST:
            // libcurl's threaded resolver keeps no reason beyond its own "Could not resolve host: NAME".
            return .cannotResolve(host: target.host,
                                  reason: message.hasPrefix("Could not resolve host") ? "no address found for it" : message)
        case CURLE_COULDNT_CONNECT:
            return .cannotConnect(endpoint: target.endpoint, reason: systemReason ?? message)
        case CURLE_OPERATION_TIMEDOUT:
            return .timedOut(url: url, seconds: request.timeout)
        case CURLE_PEER_FAILED_VERIFICATION:
            return .untrustedCertificate(endpoint: target.endpoint, reason: Self.certificateProblem(message))
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE,
             CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_CRL_BADFILE:
            return .tlsFailed(endpoint: target.endpoint, reason: message)
        case CURLE_WRITE_ERROR where bodyOverflowed:
            return .answerTooLarge(url: url, limit: request.maxResponseBytes)
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE:
            return .connectionBroken(url: url, reason: message)
        case CURLE_WEIRD_SERVER_REPLY:
            return .invalidAnswer(url: url, reason: message)
        default:
            return .failed(url: url, code: Int(code.rawValue), reason: message)
        }
    }

    /// OpenSSL's words in libcurl's "SSL certificate problem: self-signed certificate".
    private static func certificateProblem(_ message: String) -> String {
        let prefix = "SSL certificate problem: "
        return message.hasPrefix(prefix) ? String(message.dropFirst(prefix.count)) : message
    }
}
