import Foundation
import HappyClientKit
import HappyCore
import HappyCurl

/// Requests to the server's HTTP routes (PROTOCOL.md sections 6, 11 and
/// 13), with the token, each within `--timeout`, through libcurl (which
/// sleeps in poll() while it waits); failures say what went wrong in the
/// words and exit codes of the WebSocket commands. https trusts the system's
/// store plus `SSL_CERT_FILE` (and `SSL_CERT_DIR`).
struct ServerHTTP: Sendable {
    let common: CommonOptions

    /// `http://host:port/api/state?room=kitchen&seq=5`: the room (when one
    /// was chosen) first, then `parameters` that have a value.
    func url(_ path: String, _ parameters: [(String, String?)] = []) -> String {
        common.url.httpBase + path + QueryEncoding.query([("room", common.room)] + parameters)
    }

    /// The body of a 200 answer to GET `url`; any other status is a refusal
    /// with the code and message of the server's JSON error body.
    func get(_ url: String) -> Result<[UInt8], HTTPFailure> {
        send("GET", url)
    }

    /// The body of a 200 answer to `method` `url`, sending `body` (JSON) when given.
    func send(_ method: String, _ url: String, body: [UInt8]? = nil) -> Result<[UInt8], HTTPFailure> {
        var headers = [HTTPHeader("User-Agent", "happyclient")]
        if let token = common.token { headers.append(HTTPHeader("Authorization", "Bearer \(token)")) }
        if body != nil { headers.append(HTTPHeader("Content-Type", "application/json")) }
        let request = HTTPClientRequest(method: method, url: url, headers: headers, body: body ?? [], timeout: common.timeout,
                                        trust: .fromEnvironment(ProcessInfo.processInfo.environment),
                                        maxResponseBytes: Self.maxResponseBytes)
        let response: HTTPClientResponse
        do throws(HTTPClientError) {
            response = try HTTPClient().perform(request)
        } catch {
            return .failure(HTTPFailure(error, url: url))
        }
        guard response.status == 200 else { return .failure(.refusal(url: url, status: response.status, body: response.body)) }
        return .success(response.body)
    }

    /// Answers larger than this are refused (a history page of 1000 events is far smaller).
    static let maxResponseBytes = 64 << 20

    /// The JSON object of a 200 answer to GET `url` (or `method`).
    func getJSON(_ url: String, method: String = "GET", body: [UInt8]? = nil)
        -> Result<(json: JSONValue, bytes: [UInt8]), HTTPFailure> {
        send(method, url, body: body).flatMap { bytes in
            guard let json = try? JSONParser.parse(bytes, maxDepth: 64), json.isObject else {
                return .failure(.unreadable(url: url, reason: "the answer is not a JSON object"))
            }
            return .success((json, bytes))
        }
    }
}

/// Why an HTTP request to the server did not give its answer.
enum HTTPFailure: Error, Equatable, CustomStringConvertible {
    /// No connection: refused, unresolvable, TLS.
    case cannotConnect(url: String, reason: String)
    /// No answer within `--timeout`.
    case timeout(url: String, seconds: Double)
    /// An answer other than 200: its status, and the code and message of its JSON error body when it has one.
    case refused(url: String, status: Int, code: String?, message: String?)
    /// A 200 answer that is not what the route promises.
    case unreadable(url: String, reason: String)

    /// A request that got no answer, in the words of the WebSocket commands' failures.
    init(_ error: HTTPClientError, url: String) {
        switch error {
        case .timedOut(_, let seconds): self = .timeout(url: url, seconds: seconds)
        case .cannotConnect(_, let reason): self = .cannotConnect(url: url, reason: reason)
        case .cannotResolve(let host, let reason): self = .cannotConnect(url: url, reason: "cannot resolve \(host): \(reason)")
        case .untrustedCertificate(_, let reason):
            self = .cannotConnect(url: url, reason: "TLS: the server's certificate is not trusted: \(reason)")
        case .tlsFailed(_, let reason): self = .cannotConnect(url: url, reason: "TLS handshake: \(reason)")
        case .connectionBroken(_, let reason):
            self = .cannotConnect(url: url, reason: "the connection broke before the answer: \(reason)")
        case .invalidURL(_, let reason), .invalidAnswer(_, let reason): self = .unreadable(url: url, reason: reason)
        case .answerTooLarge(_, let limit): self = .unreadable(url: url, reason: "the answer is larger than \(limit >> 20) MB")
        case .setupFailed, .failed: self = .cannotConnect(url: url, reason: error.description)
        }
    }

    static func refusal(url: String, status: Int, body: [UInt8]) -> HTTPFailure {
        let json = try? JSONParser.parse(body, maxDepth: 16)
        return .refused(url: url, status: status, code: json?["code"]?.stringValue, message: json?["message"]?.stringValue)
    }

    /// `refused by the server: gone: seq 3 is no longer held: …`
    var description: String {
        switch self {
        case .cannotConnect(let url, let reason): return "cannot connect to \(url): \(reason)"
        case .timeout(let url, let seconds): return "timeout: no answer from \(url) within \(Describe.number(seconds)) s"
        case .refused(_, _, let code?, let message?): return "refused by the server: \(code): \(message)"
        case .refused(let url, let status, _, _): return "refused by the server: HTTP \(status) from \(url)"
        case .unreadable(let url, let reason): return "unreadable answer from \(url): \(reason)"
        }
    }

    var exitStatus: ExitStatus {
        switch self {
        case .cannotConnect: return .cannotConnect
        case .timeout: return .timeout
        case .refused, .unreadable: return .refused
        }
    }

    /// The HTTP status of a refusal.
    var status: Int? {
        if case .refused(_, let status, _, _) = self { return status }
        return nil
    }
}
