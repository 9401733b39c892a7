import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HappyClientKit
import HappyCore

/// GET requests to the server's HTTP routes (PROTOCOL.md sections 6 and
/// 11), with the token and within `--timeout`; failures say what went wrong
/// in the words and exit codes of the WebSocket commands.
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
        guard let address = URL(string: url) else { return .failure(.unreadable(url: url, reason: "not a URL")) }
        var request = URLRequest(url: address)
        request.timeoutInterval = common.timeout
        if let token = common.token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let outcome = Latch<Result<[UInt8], HTTPFailure>>()
        let (host, port, seconds) = (common.url.host, common.url.port, common.timeout)
        let task = URLSession.shared.dataTask(with: request) { data, response, error in
            if let error {
                outcome.set(.failure(Self.failure(error, url: url, host: host, port: port, timeout: seconds)))
            } else if let status = (response as? HTTPURLResponse)?.statusCode, status != 200 {
                outcome.set(.failure(HTTPFailure.refusal(url: url, status: status, body: Array(data ?? Data()))))
            } else {
                outcome.set(.success(Array(data ?? Data())))
            }
        }
        task.resume()
        guard let result = outcome.wait(timeout: common.timeout + 1) else {
            task.cancel()
            return .failure(.timeout(url: url, seconds: common.timeout))
        }
        return result
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

    /// A transport error in the terms of `SessionError`: a timeout, or what
    /// a plain TCP connection to the server runs into (Foundation's own
    /// texts are vague: "Could not connect to the server.").
    private static func failure(_ error: Error, url: String, host: String, port: Int, timeout: Double) -> HTTPFailure {
        if let urlError = error as? URLError, urlError.code == .timedOut {
            return .timeout(url: url, seconds: timeout)
        }
        let probed = TCPProbe.failure(host: host, port: port, timeout: min(1, timeout))
        return .cannotConnect(url: url, reason: probed ?? error.localizedDescription)
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
