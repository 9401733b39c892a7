@testable import HappyCore
import XCTest

/// The token checks that need no real HMAC: a stand-in digest (the
/// message's length, 32 times) signs and verifies the same way.
final class TokenVerifierTests: XCTestCase {
    private let standIn: TokenVerifier.HMAC = { _, message in Array(repeating: UInt8(message.count % 256), count: 32) }

    private func token(payload: String, signature: [UInt8]? = nil) -> String {
        let header = Base64URL.encode(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let body = Base64URL.encode(Array(payload.utf8))
        let signed = signature ?? standIn([], Array("\(header).\(body)".utf8))
        return "\(header).\(body).\(Base64URL.encode(signed))"
    }

    func testAMintedTokenVerifiesWithItsClaims() throws {
        let verifier = TokenVerifier(secret: "s", hmac: standIn)
        let claims = AccessClaims(subject: "ops", role: .admin, room: "lobby", expiresAt: 2_000_000_000)
        XCTAssertEqual(try verifier.verify(verifier.mint(claims), nowSeconds: 1_900_000_000).get(), claims)
        XCTAssertEqual(verifier.verify(verifier.mint(claims), nowSeconds: 2_000_000_031), .failure(.expired))
    }

    func testAnExpiryBeyondEveryClockIsRefusedNotATrap() {
        let verifier = TokenVerifier(secret: "s", hmac: standIn)
        for exp in ["1e19", "-1e19", "1e300"] {
            let result = verifier.verify(token(payload: #"{"sub":"a","role":"player","exp":\#(exp)}"#), nowSeconds: 0)
            guard case .failure(.malformed(let why)) = result else { return XCTFail("exp \(exp): \(result)") }
            XCTAssertTrue(why.contains("exp"), why)
        }
        let far = verifier.verify(token(payload: #"{"sub":"a","role":"player","exp":9.2e18}"#), nowSeconds: 0)
        XCTAssertGreaterThan(try XCTUnwrap(far.get().expiresAt), 9_000_000_000_000_000_000)
    }

    func testAnEmptySignatureNeverMatchesEvenWhenTheDigestFails() {
        let failing = TokenVerifier(secret: "s") { _, _ in [] }
        let result = failing.verify(token(payload: #"{"sub":"a","role":"admin"}"#, signature: []), nowSeconds: 0)
        XCTAssertEqual(result, .failure(.badSignature))
    }
}
