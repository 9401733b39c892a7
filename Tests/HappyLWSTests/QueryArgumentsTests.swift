import HappyLWS
import XCTest

/// The argument rules applied to the decoded `&`-separated fragments lws
/// hands over (`LWSConnection.queryArguments()` reads those from lws).
final class QueryArgumentsTests: XCTestCase {
    func testNamesAndValues() {
        XCTAssertEqual(QueryArguments.parse(fragments: ["room=lobby", "name=ann"]), ["room": "lobby", "name": "ann"])
    }

    func testTheFirstOfANameWins() {
        XCTAssertEqual(QueryArguments.parse(fragments: ["room=a", "room=b"]), ["room": "a"])
    }

    func testANameWithoutEqualsHasTheEmptyValue() {
        XCTAssertEqual(QueryArguments.parse(fragments: ["debug", "room="]), ["debug": "", "room": ""])
    }

    func testOnlyTheFirstEqualsSplits() {
        XCTAssertEqual(QueryArguments.parse(fragments: ["token=a=b=="]), ["token": "a=b=="])
    }

    func testEmptyFragmentsAreSkipped() {
        XCTAssertEqual(QueryArguments.parse(fragments: ["", "room=a", ""]), ["room": "a"])
        XCTAssertEqual(QueryArguments.parse(fragments: [String]()), [:])
    }

    func testAnEmptyNameIsKept() {
        XCTAssertEqual(QueryArguments.parse(fragments: ["=x"]), ["": "x"])
    }

    func testLongValuesAreKeptWhole() {
        let token = String(repeating: "t", count: 10_000)
        XCTAssertEqual(QueryArguments.parse(fragments: ["token=" + token, "room=r"]), ["token": token, "room": "r"])
    }
}
