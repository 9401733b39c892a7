import Foundation

/// HTTP/1.1 over a plain socket, for requests URLSession would rewrite
/// (dot segments, odd methods): the request line goes out exactly as given.
enum RawHTTP {
    struct Response {
        var status: Int
        var head: String
        var body: String
    }

    static func get(port: Int, target: String, timeout: Double = 5) throws -> Response {
        try send(port: port, "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n",
                 timeout: timeout)
    }

    /// Sends `request` and reads the response: `Content-Length` bytes, or up to
    /// the server's close (a response that neither ends nor closes throws).
    static func send(port: Int, _ request: String, timeout: Double = 5) throws -> Response {
        let socket = try RawSocket(port: port, timeout: timeout)
        try socket.send(request)
        guard let head = socket.read(until: Array("\r\n\r\n".utf8)),
              let response = parse(head) else {
            throw RawSocket.failure("no HTTP response to \(request.prefix(80))")
        }
        let body: [UInt8]
        if let length = contentLength(response.head) {
            body = socket.read(count: length) ?? []
        } else {
            let rest = socket.readToEnd()
            guard rest.ending.peerClosed else {
                throw RawSocket.failure("the response to \(request.prefix(80)) did not end: \(rest.ending)")
            }
            body = rest.bytes
        }
        return Response(status: response.status, head: response.head, body: String(decoding: body, as: UTF8.self))
    }

    private static func contentLength(_ head: String) -> Int? {
        let line = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
        return line.flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) }
    }

    private static func parse(_ head: [UInt8]) -> Response? {
        let text = String(decoding: head, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = (text.split(separator: "\r\n").first ?? "").split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { return nil }
        return Response(status: status, head: text, body: "")
    }
}
