import Foundation
import HappyCore
import Synchronization

/// A real HTTP receiver of webhook batches on 127.0.0.1: it checks each
/// batch's signature, answers 200 and keeps the deliveries, and can
/// go down (its port refuses connections) and come back on the same port,
/// or answer slowly. One request per connection, one thread per connection.
final class WebhookReceiver: @unchecked Sendable {
    struct Batch {
        let body: [UInt8]
        let signature: String?
        let deliveries: [JSONValue]
    }

    private struct State {
        var listener: Int32 = -1
        var accepted: [Batch] = []
        var delaySeconds = 0.0
        var unanswered = 0
    }

    let port: Int
    private let secret: String
    private let state = Mutex(State())

    init(secret: String) throws {
        self.secret = secret
        let (listener, port) = try Self.listen(port: 0)
        self.port = port
        state.withLock { $0.listener = listener }
        startAccepting(listener)
    }

    deinit { goDown() }

    var url: String { "http://127.0.0.1:\(port)/hooks/happy" }

    /// The batches received (each answered 200), in the order they arrived.
    var batches: [Batch] { state.withLock { $0.accepted } }
    /// Requests read and not answered yet.
    var unanswered: Int { state.withLock { $0.unanswered } }
    /// Every delivery received, in order (duplicates kept).
    var deliveries: [JSONValue] { batches.flatMap(\.deliveries) }

    /// The batches whose `X-Happy-Signature` is not the HMAC-SHA256 of their
    /// body with the secret, as `openssl dgst` computes it.
    func badlySigned() throws -> [Batch] {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("webhook-batch-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        return try batches.filter { batch in
            try Data(batch.body).write(to: file)
            let openssl = Process()
            openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            openssl.arguments = ["dgst", "-sha256", "-hmac", secret, "-r", file.path]
            let output = Pipe()
            openssl.standardOutput = output
            try openssl.run()
            openssl.waitUntilExit()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let hex = text.split(separator: " ").first.map(String.init) ?? ""
            return hex.count != 64 || batch.signature != "sha256=" + hex
        }
    }

    /// Each answer waits this long first (a slow receiver).
    func answerAfter(_ seconds: Double) { state.withLock { $0.delaySeconds = seconds } }

    /// Stops listening: connections to the port are refused.
    func goDown() {
        let listener = state.withLock { state -> Int32 in
            defer { state.listener = -1 }
            return state.listener
        }
        guard listener >= 0 else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// Listens again on the same port.
    func comeBack() throws {
        let (listener, _) = try Self.listen(port: port)
        state.withLock { $0.listener = listener }
        startAccepting(listener)
    }

    private func startAccepting(_ listener: Int32) {
        Thread { [self] in
            while true {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { return }
                Thread { [self] in serve(connection) }.start()
            }
        }.start()
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        guard let (head, body) = Self.readRequest(connection) else { return }
        let delay = state.withLock { state -> Double in
            state.unanswered += 1
            return state.delaySeconds
        }
        if delay > 0 { Thread.sleep(forTimeInterval: delay) }
        let signature = head.components(separatedBy: "\r\n").lazy.compactMap { line -> String? in
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "x-happy-signature" else { return nil }
            return parts[1].trimmingCharacters(in: .whitespaces)
        }.first
        let deliveries = (try? JSONParser.parse(body))?["deliveries"]?.arrayValue ?? []
        state.withLock {
            $0.accepted.append(Batch(body: body, signature: signature, deliveries: deliveries))
            $0.unanswered -= 1
        }
        let answer = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        _ = answer.withCString { send(connection, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
    }

    /// The head up to its empty line, then `Content-Length` bytes of body.
    private static func readRequest(_ connection: Int32) -> (String, [UInt8])? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            if let end = bytes.firstRange(of: [13, 10, 13, 10]) {
                let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self)
                let length = head.components(separatedBy: "\r\n").compactMap { line -> Int? in
                    let parts = line.split(separator: ":", maxSplits: 1)
                    guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
                    return Int(parts[1].trimmingCharacters(in: .whitespaces))
                }.first ?? 0
                if bytes.count >= end.upperBound + length {
                    return (head, Array(bytes[end.upperBound..<end.upperBound + length]))
                }
            }
            let count = recv(connection, &buffer, buffer.count, 0)
            guard count > 0 else { return nil }
            bytes += buffer[..<count]
        }
    }

    private static func listen(port: Int) throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        var reuse: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard fd >= 0, bound, Glibc.listen(fd, 64) == 0 else {
            let reason = String(cString: strerror(errno))
            if fd >= 0 { close(fd) }
            throw RawSocket.failure("webhook receiver cannot listen on 127.0.0.1:\(port): \(reason)")
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}
