import Foundation
import XCTest

/// A blocking HTTP/1.1 client on a plain TCP socket, for what URLSession
/// hides: exact status and headers (304), several requests in flight at
/// once, and long responses read part by part (multipart frame streams).
final class RawHTTPConnection {
    struct Head {
        var status: Int
        var headers: [String: String]  // lower-cased names
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let fd: Int32
    private var buffer: [UInt8] = []
    private(set) var reachedEOF = false

    /// `receiveBuffer` shrinks the kernel's receive buffer, so that a reader
    /// that stops reading pushes back on the server sooner.
    init(port: Int, receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket() failed") }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            Glibc.close(fd)
            throw Failure(description: "connect to port \(port) failed")
        }
    }

    deinit { Glibc.close(fd) }

    /// Says it will send nothing more (a FIN), and goes on reading.
    func finishSending() {
        shutdown(fd, Int32(SHUT_WR))
    }

    /// Sends `GET path` with `headers`.
    func get(_ path: String, headers: [String: String] = [:]) {
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        let bytes = Array(request.utf8)
        _ = bytes.withUnsafeBufferPointer { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// The status line and headers of the next response.
    func readHead(timeout: Double = 10) throws -> Head {
        let block = try readThrough([0x0D, 0x0A, 0x0D, 0x0A], timeout: timeout)
        let lines = String(decoding: block, as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw Failure(description: "bad status line \(lines[0])")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Head(status: status, headers: headers)
    }

    /// A whole response with a Content-Length body (none for 304).
    func readResponse(timeout: Double = 10) throws -> (head: Head, body: [UInt8]) {
        let head = try readHead(timeout: timeout)
        if head.status == 304 { return (head, []) }
        guard let length = head.headers["content-length"].flatMap(Int.init) else {
            throw Failure(description: "no content-length in \(head.headers)")
        }
        return (head, try readExactly(length, timeout: timeout))
    }

    /// The next part of a `multipart/x-mixed-replace` body: its headers and bytes.
    func readPart(boundary: String, timeout: Double = 10) throws -> (headers: [String: String], body: [UInt8]) {
        let delimiter = Array("--\(boundary)".utf8)
        let line = try readThrough([0x0D, 0x0A], timeout: timeout)
        guard Array(line.prefix(delimiter.count)) == delimiter else {
            throw Failure(description: "expected the boundary, got \(String(decoding: line, as: UTF8.self))")
        }
        if Array(line.dropLast(2)) == delimiter + Array("--".utf8) {
            throw Failure(description: "the stream ended")
        }
        let block = try readThrough([0x0D, 0x0A, 0x0D, 0x0A], timeout: timeout)
        var headers: [String: String] = [:]
        for headerLine in String(decoding: block, as: UTF8.self).components(separatedBy: "\r\n") {
            guard let colon = headerLine.firstIndex(of: ":") else { continue }
            headers[headerLine[..<colon].lowercased()] =
                headerLine[headerLine.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        guard let length = headers["content-length"].flatMap(Int.init) else {
            throw Failure(description: "part without content-length: \(headers)")
        }
        let body = try readExactly(length, timeout: timeout)
        guard try readExactly(2, timeout: timeout) == [0x0D, 0x0A] else { throw Failure(description: "no CRLF after part") }
        return (headers, body)
    }

    /// Everything until the peer closes (or `timeout`).
    func readToEnd(timeout: Double = 10) -> [UInt8] {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !reachedEOF, Date() < deadline { fill(until: deadline) }
        defer { buffer.removeAll() }
        return buffer
    }

    /// Whether some bytes arrive within `seconds`.
    func hasData(within seconds: Double) -> Bool {
        if !buffer.isEmpty { return true }
        fill(until: Date(timeIntervalSinceNow: seconds))
        return !buffer.isEmpty
    }

    func readExactly(_ count: Int, timeout: Double) throws -> [UInt8] {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while buffer.count < count {
            guard !reachedEOF, Date() < deadline else {
                throw Failure(description: "wanted \(count) bytes, have \(buffer.count) (eof: \(reachedEOF))")
            }
            fill(until: deadline)
        }
        defer { buffer.removeFirst(count) }
        return Array(buffer.prefix(count))
    }

    private func readThrough(_ terminator: [UInt8], timeout: Double) throws -> [UInt8] {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            if let end = find(terminator) {
                let block = Array(buffer[..<(end + terminator.count)])
                buffer.removeFirst(end + terminator.count)
                return block
            }
            guard !reachedEOF, Date() < deadline else {
                throw Failure(description: "no \(terminator) within \(timeout) s (eof: \(reachedEOF), \(buffer.count) bytes)")
            }
            fill(until: deadline)
        }
    }

    private func find(_ pattern: [UInt8]) -> Int? {
        guard buffer.count >= pattern.count else { return nil }
        for start in 0...(buffer.count - pattern.count) where buffer[start] == pattern[0] {
            if Array(buffer[start..<start + pattern.count]) == pattern { return start }
        }
        return nil
    }

    /// Reads whatever arrives before `deadline` (waits at most until then).
    private func fill(until deadline: Date) {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let milliseconds = max(0, Int32(deadline.timeIntervalSinceNow * 1000))
        guard poll(&descriptor, 1, milliseconds) > 0 else { return }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let count = chunk.withUnsafeMutableBufferPointer { recv(fd, $0.baseAddress, $0.count, 0) }
        if count <= 0 { reachedEOF = true; return }
        buffer.append(contentsOf: chunk[0..<count])
    }
}

/// PNG checks for frame tests.
enum PNGHeader {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Width and height from the IHDR chunk, or nil when the bytes are not a PNG.
    static func size<C: Collection>(_ bytes: C) -> (width: Int, height: Int)? where C.Element == UInt8 {
        let png = Array(bytes.prefix(24))
        guard png.count == 24, Array(png[0..<8]) == signature, Array(png[12..<16]) == Array("IHDR".utf8) else {
            return nil
        }
        let int = { (offset: Int) in png[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (int(16), int(20))
    }
}
