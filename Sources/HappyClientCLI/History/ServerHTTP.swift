import Foundation
import HappyClientKit
import HappyCore

/// GET requests to the server's HTTP routes (PROTOCOL.md sections 6 and
/// 11), with the token, each wait within `--timeout`; failures say what went
/// wrong in the words and exit codes of the WebSocket commands. Plain
/// sockets and poll() rather than URLSession, whose wait for an answer spins
/// a core on Linux.
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
        guard let target = RequestTarget(url) else { return .failure(.unreadable(url: url, reason: "not a URL")) }
        var request = "GET \(target.pathAndQuery) HTTP/1.1\r\nHost: \(target.hostHeader)\r\n"
            + "User-Agent: happyclient\r\nAccept: */*\r\nConnection: close\r\n"
        if let token = common.token { request += "Authorization: Bearer \(token)\r\n" }
        request += "\r\n"

        let stream: ServerStream
        switch ServerStream.open(host: target.host, port: target.port, secure: target.secure, idleTimeout: common.timeout) {
        case .failure(let failure): return .failure(Self.failure(failure, url: url, timeout: common.timeout))
        case .success(let opened): stream = opened
        }
        if let failure = stream.write(Array(request.utf8)) {
            return .failure(Self.failure(failure, url: url, timeout: common.timeout))
        }
        var reader = HTTPResponseReader()
        while true {
            let progress: HTTPResponseReader.Progress
            switch stream.read() {
            case .failure(let failure): return .failure(Self.failure(failure, url: url, timeout: common.timeout))
            case .success(let bytes): progress = bytes.isEmpty ? reader.finish() : reader.feed(bytes)
            }
            switch progress {
            case .needMore: continue
            case .invalid(let reason): return .failure(.unreadable(url: url, reason: reason))
            case .complete(let response) where response.status == 200: return .success(response.body)
            case .complete(let response): return .failure(.refusal(url: url, status: response.status, body: response.body))
            }
        }
    }

    /// The JSON object of a 200 answer to GET `url`.
    func getJSON(_ url: String) -> Result<(json: JSONValue, bytes: [UInt8]), HTTPFailure> {
        get(url).flatMap { bytes in
            guard let json = try? JSONParser.parse(bytes, maxDepth: 64), json.isObject else {
                return .failure(.unreadable(url: url, reason: "the answer is not a JSON object"))
            }
            return .success((json, bytes))
        }
    }

    /// A failure on the connection in the terms of `SessionError`.
    private static func failure(_ failure: StreamFailure, url: String, timeout: Double) -> HTTPFailure {
        switch failure {
        case .timeout: return .timeout(url: url, seconds: timeout)
        case .cannotConnect(let reason): return .cannotConnect(url: url, reason: reason)
        case .broken(let reason): return .cannotConnect(url: url, reason: "the connection broke before the answer: \(reason)")
        }
    }
}

/// Where a GET goes: `http://host:port/path?query` taken apart.
struct RequestTarget: Equatable {
    var secure: Bool
    var host: String
    var port: Int
    /// `/api/state?room=kitchen`
    var pathAndQuery: String

    init?(_ url: String) {
        guard let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = parts.host, !host.isEmpty else { return nil }
        secure = scheme == "https"
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        port = parts.port ?? (secure ? 443 : 80)
        let path = parts.percentEncodedPath.isEmpty ? "/" : parts.percentEncodedPath
        pathAndQuery = path + (parts.percentEncodedQuery.map { "?" + $0 } ?? "")
    }

    /// The Host header: the host (an IPv6 address in brackets) and its port.
    var hostHeader: String {
        (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
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
