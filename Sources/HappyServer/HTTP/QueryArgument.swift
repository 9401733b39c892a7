import HappyCore

/// Query arguments read as numbers, strictly: decimal digits only (no sign,
/// fraction or spaces), a 400 `invalid_value` naming the argument otherwise.
enum QueryArgument {
    /// A seq: a decimal integer without sign or fraction; nil when absent.
    static func sequenceNumber(_ query: [String: String], _ name: String) throws(HTTPError) -> UInt64? {
        guard let text = query[name] else { return nil }
        guard !text.isEmpty, text.utf8.count <= 20, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              let value = UInt64(text) else {
            throw HTTPError(status: 400, code: ErrorCode.invalidValue.rawValue, "\(name) must be a whole number (a seq)")
        }
        return value
    }

    /// A decimal integer without sign or fraction, within `range`; nil when absent.
    static func integer(_ query: [String: String], _ name: String, in range: ClosedRange<Int>) throws(HTTPError) -> Int? {
        guard let text = query[name] else { return nil }
        guard !text.isEmpty, text.utf8.count <= 6, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              let value = Int(text), range.contains(value) else {
            throw HTTPError(status: 400, code: ErrorCode.invalidValue.rawValue,
                            "\(name) must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }
}
