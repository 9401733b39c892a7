import Foundation
import HappyCore
import XCTest

extension JSONValue {
    /// The same value with every object's members sorted by key, so that two
    /// values compare equal whatever their member order.
    var normalized: JSONValue {
        switch self {
        case .object(let members):
            return .object(members.map { (key: $0.key, value: $0.value.normalized) }.sorted { $0.key < $1.key })
        case .array(let items):
            return .array(items.map(\.normalized))
        default:
            return self
        }
    }

    var arrayValue: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }

    /// A number that is a whole value.
    var intValue: Int? {
        guard let number = doubleValue, number == number.rounded(), abs(number) < 9e15 else { return nil }
        return Int(number)
    }

    static func parse(_ text: String) -> JSONValue {
        do { return try JSONParser.parse(text, maxDepth: 64) } catch { fatalError("bad JSON in a test: \(error)") }
    }
}

/// Values from PROTOCOL.md the tests compare against.
enum Contract {
    /// The default scene of section 1.
    static let defaultState = JSONValue.parse("""
        { "face":   { "happiness": 50, "smile": 0.0, "scale": 0.9 },
          "heart":  { "rate": 0.5, "fillColor": "#ff0000", "strokeColor": "#000000", "lineWidth": 1 },
          "dragon": { "x": 10, "y": 10, "hidden": false } }
        """)

    static let defaultGeometry = JSONValue.parse(#"{ "width": 375, "height": 180, "dragonSize": 100, "step": 10 }"#)

    static let defaultLimits = JSONValue.parse(#"{ "intentsPerSecond": 60, "intentBurst": 120, "maxMessageBytes": 4096 }"#)

    static var nowMilliseconds: Double { (Date().timeIntervalSince1970 * 1000).rounded() }
}

/// Asserts that two JSON values are equal regardless of member order.
func XCTAssertJSONEqual(_ actual: JSONValue?, _ expected: JSONValue, _ message: String = "",
                        file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(actual?.normalized, expected.normalized, message, file: file, line: line)
}

/// Runs `body(index)` on `count` threads at once and waits for all of them.
func runConcurrently(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    var threads: [Thread] = []
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.stackSize = 1 << 20
        threads.append(thread)
    }
    for thread in threads { thread.start() }
    group.wait()
}

/// Hands a value to another thread that alone uses it from then on.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// `text` as JSON, or nil when it is not JSON: an answer that should have
/// been JSON then fails its assertion instead of stopping the test run.
func jsonBody(_ text: String) -> JSONValue? {
    try? JSONParser.parse(text, maxDepth: 64)
}
