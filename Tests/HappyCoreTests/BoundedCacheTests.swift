import XCTest
import HappyCore

final class BoundedCacheTests: XCTestCase {
    func testKeepsWithinEntryCountEvictingTheLeastRecentlyUsed() {
        var cache = BoundedCache<String, Int>(maxEntries: 2, maxCost: 1000)
        cache.insert(1, for: "a", cost: 10)
        cache.insert(2, for: "b", cost: 10)
        XCTAssertEqual(cache.value(for: "a"), 1)  // "b" is now the least recently used
        cache.insert(3, for: "c", cost: 10)
        XCTAssertEqual(cache.count, 2)
        XCTAssertNil(cache.value(for: "b"))
        XCTAssertEqual(cache.value(for: "a"), 1)
        XCTAssertEqual(cache.value(for: "c"), 3)
        XCTAssertEqual(cache.totalCost, 20)
    }

    func testKeepsWithinTotalCost() {
        var cache = BoundedCache<Int, String>(maxEntries: 100, maxCost: 100)
        for key in 0..<10 { cache.insert("v\(key)", for: key, cost: 30) }
        XCTAssertEqual(cache.count, 3)
        XCTAssertEqual(cache.totalCost, 90)
        XCTAssertEqual([7, 8, 9].compactMap { cache.value(for: $0) }, ["v7", "v8", "v9"])
        cache.insert("big", for: 99, cost: 100)
        XCTAssertEqual(cache.count, 1, "a value of the whole budget evicts everything else")
        XCTAssertEqual(cache.totalCost, 100)
    }

    func testValueOverTheBudgetIsNotKept() {
        var cache = BoundedCache<Int, String>(maxEntries: 10, maxCost: 100)
        cache.insert("small", for: 1, cost: 10)
        cache.insert("huge", for: 2, cost: 101)
        XCTAssertNil(cache.value(for: 2))
        XCTAssertEqual(cache.value(for: 1), "small")
    }

    func testReplacingAKeyUpdatesItsCost() {
        var cache = BoundedCache<Int, String>(maxEntries: 10, maxCost: 100)
        cache.insert("a", for: 1, cost: 40)
        cache.insert("b", for: 1, cost: 60)
        XCTAssertEqual(cache.count, 1)
        XCTAssertEqual(cache.totalCost, 60)
        XCTAssertEqual(cache.value(for: 1), "b")
        cache.remove(1)
        XCTAssertEqual(cache.totalCost, 0)
        XCTAssertFalse(cache.contains(1))
    }
}
