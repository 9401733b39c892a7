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

    func testATokenWhoseNotBeforeIsAheadIsRefusedUntilThen() {
        let verifier = TokenVerifier(secret: "s", hmac: standIn)
        let future = token(payload: #"{"sub":"a","role":"player","nbf":2000000000}"#)
        XCTAssertEqual(verifier.verify(future, nowSeconds: 1_999_999_000), .failure(.notYetValid))
        XCTAssertEqual(try verifier.verify(future, nowSeconds: 1_999_999_990).get().subject, "a", "within the leeway")
        guard case .failure(.malformed) = verifier.verify(token(payload: #"{"sub":"a","role":"player","nbf":"soon"}"#),
                                                          nowSeconds: 0) else { return XCTFail("nbf must be a number") }
    }

    func testAClaimNamedTwiceIsRefusedWhicheverComesLast() {
        let verifier = TokenVerifier(secret: "s", hmac: standIn)
        for payload in [#"{"sub":"a","role":"player","role":"admin"}"#, #"{"sub":"a","role":"admin","role":"player"}"#,
                        #"{"sub":"a","sub":"root","role":"player"}"#] {
            guard case .failure(.malformed(let why)) = verifier.verify(token(payload: payload), nowSeconds: 0) else {
                return XCTFail("\(payload) was accepted")
            }
            XCTAssertTrue(why.contains("twice"), why)
        }
        let header = Base64URL.encode(Array(#"{"alg":"none","alg":"HS256"}"#.utf8))
        let body = Base64URL.encode(Array(#"{"sub":"a","role":"admin"}"#.utf8))
        let signed = "\(header).\(body).\(Base64URL.encode(standIn([], Array("\(header).\(body)".utf8))))"
        guard case .failure(.malformed) = verifier.verify(signed, nowSeconds: 0) else {
            return XCTFail("a header naming alg twice was accepted")
        }
    }

    func testAudienceAndIssuerAreCheckedWhenTheServerNamesThem() throws {
        let strict = TokenVerifier(secret: "s", audience: "happy", issuer: "https://id.example", hmac: standIn)
        let right = AccessClaims(subject: "a", role: .player, audience: "happy", issuer: "https://id.example")
        XCTAssertEqual(try strict.verify(strict.mint(right), nowSeconds: 0).get(), right)
        let listed = token(payload: #"{"sub":"a","role":"player","aud":["other","happy"],"iss":"https://id.example"}"#)
        XCTAssertEqual(try strict.verify(listed, nowSeconds: 0).get().subject, "a", "aud may be a list naming it")
        for payload in [#"{"sub":"a","role":"player","iss":"https://id.example"}"#,
                        #"{"sub":"a","role":"player","aud":"other","iss":"https://id.example"}"#,
                        #"{"sub":"a","role":"player","aud":"happy"}"#,
                        #"{"sub":"a","role":"player","aud":"happy","iss":"https://evil.example"}"#] {
            guard case .failure(.wrongParty) = strict.verify(token(payload: payload), nowSeconds: 0) else {
                return XCTFail("\(payload) was accepted")
            }
        }
        let lenient = TokenVerifier(secret: "s", hmac: standIn)
        XCTAssertEqual(try lenient.verify(token(payload: #"{"sub":"a","role":"player","aud":"x"}"#), nowSeconds: 0)
            .get().subject, "a", "not checked unless configured")
    }
}
