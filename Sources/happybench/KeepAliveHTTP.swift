import Foundation

/// A blocking HTTP/1.1 client on one kept-alive loopback connection, for
/// timing single requests: no process per request (curl) and no connection
/// setup inside the measured time, so the time is the server's answer.
final class KeepAliveHTTP {
    struct Answer {
        var status: Int
        var body: [UInt8]
        /// From the request's first byte written to the answer's last byte read.
        var seconds: Double
    }

    private let port: Int
    private var socket: Int32 = -1
    /// Bytes read past the end of the previous answer.
    private var pending: [UInt8] = []
    private var chunk = [UInt8](repeating: 0, count: 256 * 1024)

    init(port: Int) {
        self.port = port
    }

    deinit {
        disconnect()
    }

    func get(_ target: String) throws -> Answer {
        try request("GET", target, body: [])
    }

    func post(_ target: String, json: String) throws -> Answer {
        try request("POST", target, body: Array(json.utf8), contentType: "application/json")
    }

    /// One request; a connection the server closed between requests is reopened once.
    private func request(_ method: String, _ target: String, body: [UInt8], contentType: String? = nil) throws -> Answer {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        if let contentType { head += "Content-Type: \(contentType)\r\n" }
        if method != "GET" { head += "Content-Length: \(body.count)\r\n" }
        let bytes = Array((head + "\r\n").utf8) + body
        for attempt in 0..<2 {
            if socket < 0 { try connect() }
            let started = DispatchTime.now().uptimeNanoseconds
            do {
                try write(bytes)
                var answer = try readAnswer()
                answer.seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
                return answer
            } catch let error as ConnectionClosed where attempt == 0 && error.beforeAnswer {
                disconnect()
            }
        }
        throw BenchError("\(method) \(target): the server closed the connection twice")
    }

    private struct ConnectionClosed: Error {
        var beforeAnswer: Bool
    }

    private func connect() throws {
        let descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw BenchError("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw BenchError("connect to 127.0.0.1:\(port): \(reason)")
        }
        var one: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        socket = descriptor
        pending.removeAll(keepingCapacity: true)
    }

    private func disconnect() {
        if socket >= 0 { close(socket) }
        socket = -1
        pending.removeAll(keepingCapacity: true)
    }

    private func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw ConnectionClosed(beforeAnswer: true) }
            offset += written
        }
    }

    /// Reads more bytes into `pending`; false at the end of the stream.
    private func fill() throws -> Bool {
        while true {
            let count = recv(socket, &chunk, chunk.count, 0)
            if count > 0 { pending.append(contentsOf: chunk[0..<count]); return true }
            if count == 0 { return false }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { throw BenchError("no answer from the server within 60 s") }
            return false
        }
    }

    private func readAnswer() throws -> Answer {
        let separator: [UInt8] = [13, 10, 13, 10]
        var headerEnd: Int?
        var searched = 0
        while headerEnd == nil {
            if let found = Self.find(separator, in: pending, from: max(0, searched - 3)) {
                headerEnd = found
            } else {
                searched = pending.count
                guard try fill() else { throw ConnectionClosed(beforeAnswer: pending.isEmpty) }
            }
        }
        let headerText = String(decoding: pending[0..<headerEnd!], as: UTF8.self)
        pending.removeFirst(headerEnd! + 4)
        let lines = headerText.components(separatedBy: "\r\n")
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw BenchError("not an HTTP answer: \(lines.first ?? "")")
        }
        var length: Int?
        var chunked = false
        var closes = false
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces).lowercased()
            switch name {
            case "content-length": length = Int(value)
            case "transfer-encoding": chunked = value.contains("chunked")
            case "connection": closes = value.contains("close")
            default: break
            }
        }
        var body: [UInt8] = []
        if chunked {
            body = try readChunked()
        } else if let length {
            while pending.count < length {
                guard try fill() else { throw ConnectionClosed(beforeAnswer: false) }
            }
            body = Array(pending[0..<length])
            pending.removeFirst(length)
        } else if status != 304 && status != 204 {
            while try fill() {}
            body = pending
            pending.removeAll()
            closes = true
        }
        if closes { disconnect() }
        return Answer(status: status, body: body, seconds: 0)
    }

    private func readChunked() throws -> [UInt8] {
        var body: [UInt8] = []
        let lineEnd: [UInt8] = [13, 10]
        while true {
            var end = Self.find(lineEnd, in: pending, from: 0)
            while end == nil {
                guard try fill() else { throw ConnectionClosed(beforeAnswer: false) }
                end = Self.find(lineEnd, in: pending, from: 0)
            }
            let sizeText = String(decoding: pending[0..<end!], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
                throw BenchError("bad chunk size \(sizeText)")
            }
            pending.removeFirst(end! + 2)
            while pending.count < size + 2 {
                guard try fill() else { throw ConnectionClosed(beforeAnswer: false) }
            }
            body += pending[0..<size]
            pending.removeFirst(size + 2)
            if size == 0 { return body }
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard haystack.count >= needle.count, start <= haystack.count - needle.count else { return nil }
        for index in start...(haystack.count - needle.count) where haystack[index] == needle[0] {
            if Array(haystack[index..<(index + needle.count)]) == needle { return index }
        }
        return nil
    }
}
