import HappyCore

/// Query arguments read as numbers, strictly: decimal digits only (no sign,
/// fraction or spaces), a 400 `invalid_value` naming the argument otherwise;
/// and the check that a request names no parameter its route does not know.
enum QueryArgument {
    /// A 400 `invalid_value` naming the parameters of `query` not in `known`
    /// (a mistyped `width=` for `w=` would otherwise be ignored without a word).
    static func checkKnown(_ query: [String: String], _ known: [String], route: String) throws(HTTPError) {
        let unknown = query.keys.filter { !known.contains($0) }.sorted()
        guard !unknown.isEmpty else { return }
        let names = unknown.map { "\"\($0)\"" }.joined(separator: ", ")
        let knownList = known.isEmpty ? "none" : known.joined(separator: ", ")
        throw HTTPError(.invalidValue,
                        "unknown query parameter\(unknown.count == 1 ? "" : "s") \(names) on \(route) (known: \(knownList))")
    }

    /// A seq: a decimal integer without sign or fraction; nil when absent.
    static func sequenceNumber(_ query: [String: String], _ name: String) throws(HTTPError) -> UInt64? {
        guard let text = query[name] else { return nil }
        guard !text.isEmpty, text.utf8.count <= 20, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              let value = UInt64(text) else {
            throw HTTPError(.invalidValue, "\(name) must be a whole number (a seq)")
        }
        return value
    }

    /// A decimal integer without sign or fraction, within `range`; nil when absent.
    static func integer(_ query: [String: String], _ name: String, in range: ClosedRange<Int>) throws(HTTPError) -> Int? {
        guard let text = query[name] else { return nil }
        guard !text.isEmpty, text.utf8.count <= 6, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              let value = Int(text), range.contains(value) else {
            throw HTTPError(.invalidValue,
                            "\(name) must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }
}
