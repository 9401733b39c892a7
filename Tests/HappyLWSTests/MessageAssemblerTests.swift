import HappyLWS
import XCTest

final class MessageAssemblerTests: XCTestCase {
    /// Feeds `chunk` and returns the progress with the message copied out.
    private func add(_ assembler: inout MessageAssembler, _ chunk: [UInt8], binary: Bool = false,
                     ends: Bool) -> (String, [UInt8]?, Bool?) {
        chunk.withUnsafeBytes { bytes in
            switch assembler.add(bytes, isBinary: binary, endsMessage: ends) {
            case .needsMore: return ("needsMore", nil, nil)
            case .tooBig: return ("tooBig", nil, nil)
            case .complete(let message): return ("complete", message.bytes, message.isBinary)
            }
        }
    }

    func testAMessageInOneChunkIsPassedThroughWithoutACopy() {
        var assembler = MessageAssembler(limit: 16)
        let chunk: [UInt8] = Array("hello".utf8)
        chunk.withUnsafeBytes { bytes in
            guard case .complete(let message) = assembler.add(bytes, isBinary: false, endsMessage: true) else {
                return XCTFail("expected a complete message")
            }
            message.withUnsafeBytes { XCTAssertEqual($0.baseAddress, bytes.baseAddress) }
            XCTAssertEqual(message.count, 5)
            XCTAssertFalse(message.isBinary)
        }
        XCTAssertFalse(assembler.isAssembling)
    }

    func testChunksAreGatheredAndTheFirstChunkSaysWhetherTheMessageIsBinary() {
        var assembler = MessageAssembler(limit: 16)
        XCTAssertEqual(add(&assembler, [1, 2], binary: true, ends: false).0, "needsMore")
        XCTAssertTrue(assembler.isAssembling)
        XCTAssertEqual(assembler.gatheredCount, 2)
        // A continuation frame reports no type of its own.
        XCTAssertEqual(add(&assembler, [3], binary: false, ends: false).0, "needsMore")
        let (state, bytes, binary) = add(&assembler, [4, 5], binary: false, ends: true)
        XCTAssertEqual(state, "complete")
        XCTAssertEqual(bytes, [1, 2, 3, 4, 5])
        XCTAssertEqual(binary, true)
        XCTAssertFalse(assembler.isAssembling)
        XCTAssertEqual(assembler.gatheredCount, 0)
    }

    func testAMessageOfExactlyTheLimitPassesAndOneByteMoreIsTooBig() {
        var assembler = MessageAssembler(limit: 4)
        XCTAssertEqual(add(&assembler, [1, 2, 3, 4], ends: true).1, [1, 2, 3, 4])
        XCTAssertEqual(add(&assembler, [1, 2], ends: false).0, "needsMore")
        XCTAssertEqual(add(&assembler, [3, 4], ends: true).1, [1, 2, 3, 4])
        XCTAssertEqual(add(&assembler, [1, 2, 3, 4, 5], ends: true).0, "tooBig")
        XCTAssertEqual(add(&assembler, [1, 2, 3], ends: false).0, "needsMore")
        XCTAssertEqual(add(&assembler, [4, 5], ends: true).0, "tooBig")
        XCTAssertFalse(assembler.isAssembling)
    }

    func testTheRestOfATooBigMessageIsSkippedAndTheNextOneIsWhole() {
        var assembler = MessageAssembler(limit: 4)
        XCTAssertEqual(add(&assembler, [1, 2, 3], ends: false).0, "needsMore")
        XCTAssertEqual(add(&assembler, [4, 5, 6], ends: false).0, "tooBig")
        XCTAssertEqual(assembler.gatheredCount, 0)
        XCTAssertEqual(add(&assembler, [7], ends: false).0, "needsMore")
        XCTAssertEqual(add(&assembler, [8], ends: true).0, "needsMore")
        XCTAssertEqual(add(&assembler, [9, 10], binary: true, ends: true).1, [9, 10])

        // A first chunk already over the limit is skipped to its message's end too.
        XCTAssertEqual(add(&assembler, [1, 2, 3, 4, 5], ends: false).0, "tooBig")
        XCTAssertEqual(add(&assembler, [6], ends: true).0, "needsMore")
        XCTAssertEqual(add(&assembler, [7], ends: true).1, [7])
    }

    func testResetDropsTheMessageInProgress() {
        var assembler = MessageAssembler(limit: 8)
        XCTAssertEqual(add(&assembler, [1, 2], binary: true, ends: false).0, "needsMore")
        assembler.reset()
        XCTAssertFalse(assembler.isAssembling)
        let (state, bytes, binary) = add(&assembler, [3], binary: false, ends: true)
        XCTAssertEqual(state, "complete")
        XCTAssertEqual(bytes, [3])
        XCTAssertEqual(binary, false)
    }

    func testEmptyChunksAndEmptyMessages() {
        var assembler = MessageAssembler(limit: 8)
        XCTAssertEqual(add(&assembler, [], ends: true).1, [])
        // An empty first frame still opens the message and sets its type.
        XCTAssertEqual(add(&assembler, [], binary: true, ends: false).0, "needsMore")
        XCTAssertTrue(assembler.isAssembling)
        let (_, bytes, binary) = add(&assembler, [1], binary: false, ends: true)
        XCTAssertEqual(bytes, [1])
        XCTAssertEqual(binary, true)
    }

    func testWithUnsafeBufferPointerSeesTheGatheredBytes() {
        var assembler = MessageAssembler(limit: 8)
        _ = add(&assembler, [1, 2], ends: false)
        [UInt8]([3]).withUnsafeBytes { bytes in
            guard case .complete(let message) = assembler.add(bytes, isBinary: false, endsMessage: true) else {
                return XCTFail("expected a complete message")
            }
            XCTAssertEqual(message.withUnsafeBufferPointer { Array($0) }, [1, 2, 3])
            XCTAssertEqual(message.count, 3)
        }
    }
}
