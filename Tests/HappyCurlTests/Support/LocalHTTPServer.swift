import Foundation
import Synchronization

/// A real HTTP server on 127.0.0.1 for the client's tests: each connection
/// gets one request read and one scripted answer written, on a thread of its
/// own, and what it was asked is kept. `.silent` reads and never answers.
final class LocalHTTPServer: @unchecked Sendable {
    enum Answer: Sendable {
        /// These bytes, then close.
        case raw(String)
        /// Close after reading the request, answering nothing.
        case hangUp
        /// Read the request and keep the connection open, answering nothing.
        case silent
    }

    /// A request as it arrived: head (request line and headers) and body.
    struct Request: Sendable {
        var head: String
        var body: [UInt8]

        var requestLine: String { head.components(separatedBy: "\r\n").first ?? "" }

        /// Header lines, `Name: value`, as sent.
        var headerLines: [String] { Array(head.components(separatedBy: "\r\n").dropFirst()) }
    }

    let port: Int
    private let core: Core

    init(_ answer: Answer) throws {
        let (listener, port) = try Self.listen()
        self.port = port
        core = Core(listener: listener, answer: answer)
        Thread { [core] in core.acceptLoop() }.start()
    }

    /// Stops accepting; the accept thread ends and closes what it held.
    deinit { shutdown(core.listener, Int32(SHUT_RDWR)) }

    var requests: [Request] { core.received.withLock { $0 } }

    /// An answer with a JSON body.
    static func json(_ body: String, status: String = "200 OK", headers: [String] = []) -> Answer {
        .raw("HTTP/1.1 \(status)\r\nContent-Type: application/json\r\n" + headers.map { $0 + "\r\n" }.joined()
             + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
    }

    /// What the accept thread and each connection's thread share.
    private final class Core: @unchecked Sendable {
        let listener: Int32
        let answer: Answer
        let received = Mutex<[Request]>([])
        private let held = Mutex<[Int32]>([])

        init(listener: Int32, answer: Answer) {
            self.listener = listener
            self.answer = answer
        }

        deinit {
            close(listener)
            held.withLock { $0.forEach { close($0) } }
        }

        func acceptLoop() {
            while true {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { return }
                Thread { [self] in serve(connection) }.start()
            }
        }

        private func serve(_ connection: Int32) {
            if let request = LocalHTTPServer.readRequest(connection) { received.withLock { $0.append(request) } }
            switch answer {
            case .raw(let text):
                var bytes = Array(text.utf8)[...]
                while !bytes.isEmpty {
                    let sent = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    guard sent > 0 else { break }
                    bytes = bytes.dropFirst(sent)
                }
                close(connection)
            case .hangUp:
                close(connection)
            case .silent:
                held.withLock { $0.append(connection) }
            }
        }
    }

    /// The head up to its empty line, then `Content-Length` bytes of body;
    /// nil for what is no HTTP request (a TLS handshake), which the answer follows at once.
    fileprivate static func readRequest(_ connection: Int32) -> Request? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var head: String?
        var bodyStart = 0
        var length = 0
        while true {
            if head == nil, let end = find([13, 10, 13, 10], in: bytes) {
                let text = String(decoding: bytes[..<end], as: UTF8.self)
                head = text
                bodyStart = end + 4
                length = text.components(separatedBy: "\r\n").compactMap { line -> Int? in
                    let parts = line.split(separator: ":", maxSplits: 1)
                    guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
                    return Int(parts[1].trimmingCharacters(in: .whitespaces))
                }.first ?? 0
            }
            if let first = bytes.first, !(UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(first) { return nil }
            if let head, bytes.count >= bodyStart + length {
                return Request(head: head, body: Array(bytes[bodyStart..<bodyStart + length]))
            }
            let count = recv(connection, &buffer, buffer.count, 0)
            guard count > 0 else { return nil }
            bytes += buffer[..<count]
        }
    }

    private static func find(_ needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        return (0...(bytes.count - needle.count)).first { Array(bytes[$0..<$0 + needle.count]) == needle }
    }

    /// A loopback socket with a port of its own; listening unless told otherwise.
    static func listen(listening: Bool = true) throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard fd >= 0, bound, !listening || Glibc.listen(fd, 16) == 0 else {
            throw NSError(domain: "LocalHTTPServer", code: Int(errno),
                          userInfo: [NSLocalizedDescriptionKey: String(cString: strerror(errno))])
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}
