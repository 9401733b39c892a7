/// An HTTP/1.1 answer as it arrives: the status line and headers, then a
/// body of `Content-Length` bytes, in chunks, or up to the connection's end.
struct HTTPResponseReader {
    struct Response: Equatable {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
    }

    enum Progress: Equatable {
        case needMore
        case complete(Response)
        case invalid(String)
    }

    /// Answers larger than this are refused (a history page of 1000 events is far smaller).
    static let maxBytes = 64 << 20

    private var buffer: [UInt8] = []
    private var head: (status: Int, headers: [String: String], bodyStart: Int)?

    /// Adds what arrived; says whether the answer is complete.
    mutating func feed(_ bytes: [UInt8]) -> Progress {
        buffer += bytes
        guard buffer.count <= Self.maxBytes else { return .invalid("the answer is larger than \(Self.maxBytes >> 20) MB") }
        if head == nil {
            guard let end = Self.headEnd(in: buffer) else { return .needMore }
            switch Self.parseHead(buffer[..<end]) {
            case .failure(let problem): return .invalid(problem.text)
            case .success(let parsed): head = (parsed.status, parsed.headers, end + 4)
            }
        }
        return body(atEnd: false)
    }

    /// The connection ended: an answer without a length ends here.
    mutating func finish() -> Progress {
        guard head != nil else { return .invalid("the connection closed before the answer's headers") }
        if case .complete(let response) = body(atEnd: true) { return .complete(response) }
        return .invalid("the connection closed before the whole answer arrived")
    }

    private func body(atEnd: Bool) -> Progress {
        guard let head else { return .needMore }
        let rest = Array(buffer[head.bodyStart...])
        func complete(_ body: [UInt8]) -> Progress {
            .complete(Response(status: head.status, headers: head.headers, body: body))
        }
        if head.headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
            switch Self.dechunk(rest) {
            case .needMore: return .needMore
            case .invalid(let problem): return .invalid(problem)
            case .complete(let body): return complete(body)
            }
        }
        if let text = head.headers["content-length"] {
            guard let length = Int(text), length >= 0 else { return .invalid("a Content-Length of \"\(text)\"") }
            return rest.count >= length ? complete(Array(rest.prefix(length))) : .needMore
        }
        if head.status == 204 || head.status == 304 { return complete([]) }
        return atEnd ? complete(rest) : .needMore
    }

    // MARK: parsing

    private struct Problem: Error {
        var text: String
    }

    private static func headEnd(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10
            && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    /// `HTTP/1.1 200 OK` and `Name: value` lines; names in lower case.
    private static func parseHead(_ bytes: ArraySlice<UInt8>) -> Result<(status: Int, headers: [String: String]), Problem> {
        let lines = String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n")
        let statusLine = lines.first ?? ""
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]), (100...599).contains(status) else {
            return .failure(Problem(text: "not an HTTP answer: \"\(statusLine.prefix(60))\""))
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return .success((status, headers))
    }

    private enum Chunks {
        case needMore
        case invalid(String)
        case complete([UInt8])
    }

    /// The body of a chunked transfer: sizes in hex, each chunk followed by CRLF, a 0 size last.
    private static func dechunk(_ bytes: [UInt8]) -> Chunks {
        var body: [UInt8] = []
        var index = 0
        while true {
            guard let lineEnd = lineEnd(in: bytes, from: index) else { return .needMore }
            let sizeText = String(decoding: bytes[index..<lineEnd], as: UTF8.self)
                .split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard let size = Int(sizeText, radix: 16), size >= 0 else {
                return .invalid("a chunk size of \"\(sizeText.prefix(20))\"")
            }
            let dataStart = lineEnd + 2
            if size == 0 { return trailersEnd(in: bytes, from: dataStart) ? .complete(body) : .needMore }
            guard bytes.count >= dataStart + size + 2 else { return .needMore }
            body += bytes[dataStart..<dataStart + size]
            index = dataStart + size + 2
        }
    }

    /// Whether the trailer lines after the last chunk (usually none) have ended with an empty line.
    private static func trailersEnd(in bytes: [UInt8], from start: Int) -> Bool {
        var index = start
        while let end = lineEnd(in: bytes, from: index) {
            if end == index { return true }
            index = end + 2
        }
        return false
    }

    private static func lineEnd(in bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == 13 && bytes[index + 1] == 10 { return index }
            index += 1
        }
        return nil
    }
}
