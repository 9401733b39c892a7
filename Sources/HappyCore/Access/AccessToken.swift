/// The claims of a Happy access token (PROTOCOL.md section 7).
public struct AccessClaims: Equatable, Sendable {
    /// The display name (`sub`): 1–32 printable characters.
    public var subject: String
    /// The holder's role (`role`).
    public var role: Role
    /// The only room the token may be used in (`room`), or nil for any room.
    public var room: String?
    /// When the token expires (`exp`), in seconds since 1970; nil when it does not.
    public var expiresAt: Int64?
    /// Who the token is for (`aud`), when it names one.
    public var audience: String?
    /// Who made the token (`iss`), when it names one.
    public var issuer: String?

    /// Creates claims; they are not checked here.
    public init(subject: String, role: Role, room: String? = nil, expiresAt: Int64? = nil,
                audience: String? = nil, issuer: String? = nil) {
        self.subject = subject
        self.role = role
        self.room = room
        self.expiresAt = expiresAt
        self.audience = audience
        self.issuer = issuer
    }

    /// Whether these claims let their holder into `roomName`.
    public func allows(room roomName: String) -> Bool { room == nil || room == roomName }
}

/// Why a token was refused.
public enum TokenRejection: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not a well-formed token, or a claim breaks the rules; the text says what.
    case malformed(String)
    /// The signature does not match the secret.
    case badSignature
    /// `exp` has passed, by more than the verifier's `leeway`.
    case expired
    /// `nbf` is still ahead, by more than the verifier's `leeway`.
    case notYetValid
    /// `aud` or `iss` is not the one the server expects (`auth.audience`, `auth.issuer`); the text names it.
    case wrongParty(String)
    /// The header's `alg` is not `HS256` (`none` when it has none).
    case unsupportedAlgorithm(String)

    /// A short explanation, for logs and error messages.
    public var description: String {
        switch self {
        case .malformed(let why): return "malformed token: \(why)"
        case .badSignature: return "token signature does not match"
        case .expired: return "token has expired"
        case .notYetValid: return "token is not valid yet (nbf is in the future)"
        case .wrongParty(let why): return why
        case .unsupportedAlgorithm(let alg): return "token algorithm \(alg) is not HS256"
        }
    }
}

/// Verifies and mints HS256 JSON Web Tokens. The HMAC itself is supplied by
/// the caller (OpenSSL in the server), keeping this module free of C.
public struct TokenVerifier: Sendable {
    /// Computes the HMAC-SHA256 of `message` with `key` (the 32-byte digest).
    public typealias HMAC = @Sendable (_ key: [UInt8], _ message: [UInt8]) -> [UInt8]

    private let secret: [UInt8]
    private let hmac: HMAC
    /// Seconds of clock difference tolerated on `exp` and `nbf`.
    public let leeway: Int64
    /// The `aud` a token must name; nil: not checked.
    public let audience: String?
    /// The `iss` a token must carry; nil: not checked.
    public let issuer: String?

    /// Creates a verifier for tokens signed with the UTF-8 bytes of `secret`,
    /// tolerating `leeway` seconds of clock difference on `exp` and `nbf`, and
    /// requiring `audience` and `issuer` when they are given (empty: not checked).
    public init(secret: String, leeway: Int64 = 30, audience: String = "", issuer: String = "",
                hmac: @escaping HMAC) {
        self.secret = Array(secret.utf8)
        self.hmac = hmac
        self.leeway = leeway
        self.audience = audience.isEmpty ? nil : audience
        self.issuer = issuer.isEmpty ? nil : issuer
    }

    /// Checks a token's form, algorithm and signature, then reads its claims.
    ///
    /// - Parameters:
    ///   - token: the compact JWT, `header.payload.signature` in base64url.
    ///   - nowSeconds: the current time, in seconds since 1970.
    /// - Returns: the claims, or why the token is refused: no name may appear twice in the
    ///   header or the payload; `sub` must be a valid display name, `role` one of the three
    ///   roles, `room` (optional) a valid room name, `exp` (optional) a number at most
    ///   `leeway` seconds in the past, `nbf` (optional) one at most `leeway` seconds ahead,
    ///   and `aud` and `iss` the expected ones when the verifier has them.
    public func verify(_ token: String, nowSeconds: Int64) -> Result<AccessClaims, TokenRejection> {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return .failure(.malformed("expected three dot-separated parts")) }
        guard let headerBytes = Base64URL.decode(parts[0]), let payloadBytes = Base64URL.decode(parts[1]),
              let signature = Base64URL.decode(parts[2]) else {
            return .failure(.malformed("not base64url"))
        }
        guard let header = try? JSONParser.parse(headerBytes), header.isObject else {
            return .failure(.malformed("header is not a JSON object"))
        }
        if let name = Self.repeatedName(in: header) { return .failure(.malformed("header names \(name) twice")) }
        guard header["alg"]?.stringValue == "HS256" else {
            return .failure(.unsupportedAlgorithm(header["alg"]?.stringValue ?? "none"))
        }
        let signingInput = Array("\(parts[0]).\(parts[1])".utf8)
        // HS256 signs with 32 bytes; anything else (an empty one too) cannot be a match.
        guard signature.count == 32, Self.constantTimeEqual(hmac(secret, signingInput), signature) else {
            return .failure(.badSignature)
        }
        guard let payload = try? JSONParser.parse(payloadBytes), payload.isObject else {
            return .failure(.malformed("payload is not a JSON object"))
        }
        // Readers differ on which of two equal names wins: a token that has two is nobody's.
        if let name = Self.repeatedName(in: payload) { return .failure(.malformed("claim \(name) appears twice")) }
        guard let subject = payload["sub"]?.stringValue, Names.isValidDisplayName(subject) else {
            return .failure(.malformed("sub must be a name of 1-32 printable characters"))
        }
        guard let roleName = payload["role"]?.stringValue, let role = Role(rawValue: roleName) else {
            return .failure(.malformed("role must be viewer, player or admin"))
        }
        var room: String?
        if let value = payload["room"], value != .null {
            guard let name = value.stringValue, Names.isValidRoom(name) else { return .failure(.malformed("room is not a room name")) }
            room = name
        }
        var expiresAt: Int64?
        if let value = payload["exp"], value != .null {
            guard let seconds = value.doubleValue, seconds.isFinite,
                  let whole = Int64(exactly: seconds.rounded(.towardZero)) else {
                return .failure(.malformed("exp must be a number of seconds since 1970"))
            }
            expiresAt = whole
            if nowSeconds - leeway > whole { return .failure(.expired) }
        }
        if let value = payload["nbf"], value != .null {
            guard let seconds = value.doubleValue, seconds.isFinite,
                  let whole = Int64(exactly: seconds.rounded(.towardZero)) else {
                return .failure(.malformed("nbf must be a number of seconds since 1970"))
            }
            if whole > nowSeconds + leeway { return .failure(.notYetValid) }
        }
        let audiences: [String]
        switch payload["aud"] {
        case nil, .null?: audiences = []
        case .string(let one)?: audiences = [one]
        case .array(let list)?:
            let names = list.compactMap(\.stringValue)
            guard names.count == list.count else { return .failure(.malformed("aud must be a string or a list of strings")) }
            audiences = names
        default: return .failure(.malformed("aud must be a string or a list of strings"))
        }
        if let audience, !audiences.contains(audience) {
            return .failure(.wrongParty("the token is not for this server: its aud must name \(audience)"))
        }
        let issuedBy = payload["iss"]?.stringValue
        if let issuer, issuedBy != issuer {
            return .failure(.wrongParty("the token was not issued by \(issuer) (its iss must be that)"))
        }
        return .success(AccessClaims(subject: subject, role: role, room: room, expiresAt: expiresAt,
                                     audience: audiences.first, issuer: issuedBy))
    }

    /// A member name that appears more than once in `object`, if any.
    private static func repeatedName(in object: JSONValue) -> String? {
        guard case .object(let members) = object else { return nil }
        var seen = Set<String>()
        for member in members where !seen.insert(member.key).inserted { return member.key }
        return nil
    }

    /// Makes an HS256 token carrying `claims`, signed with the secret; the claims are
    /// written as given, without checks.
    public func mint(_ claims: AccessClaims) -> String {
        var payload = JSONWriter(capacity: 128)
        payload.beginObject()
        payload.key("sub"); payload.string(claims.subject)
        payload.key("role"); payload.string(claims.role.rawValue)
        if let room = claims.room { payload.key("room"); payload.string(room) }
        if let exp = claims.expiresAt { payload.key("exp"); payload.int(Int(exp)) }
        if let audience = claims.audience { payload.key("aud"); payload.string(audience) }
        if let issuer = claims.issuer { payload.key("iss"); payload.string(issuer) }
        payload.endObject()
        let header = Base64URL.encode(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let body = Base64URL.encode(payload.bytes)
        let signature = Base64URL.encode(hmac(secret, Array("\(header).\(body)".utf8)))
        return "\(header).\(body).\(signature)"
    }

    /// Compares without an early exit, so timing reveals nothing of the expected bytes.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in 0..<a.count { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}

/// Base64 with the URL alphabet and no padding (RFC 4648 section 5).
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Encodes `bytes` as base64url without padding.
    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            for shift in [18, 12, 6, 0] { out.append(alphabet[Int((n >> UInt32(shift)) & 63)]) }
            index += 3
        }
        let rest = bytes.count - index
        if rest == 1 {
            let n = UInt32(bytes[index]) << 16
            out.append(alphabet[Int((n >> 18) & 63)]); out.append(alphabet[Int((n >> 12) & 63)])
        } else if rest == 2 {
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            out.append(alphabet[Int((n >> 18) & 63)]); out.append(alphabet[Int((n >> 12) & 63)])
            out.append(alphabet[Int((n >> 6) & 63)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes unpadded base64url; nil for any other character (`=` included) or for a
    /// length no encoding produces.
    public static func decode<S: StringProtocol>(_ text: S) -> [UInt8]? {
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in text.utf8 {
            let value: UInt32
            switch byte {
            case 0x41...0x5A: value = UInt32(byte - 0x41)
            case 0x61...0x7A: value = UInt32(byte - 0x61 + 26)
            case 0x30...0x39: value = UInt32(byte - 0x30 + 52)
            case UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "_"): value = 63
            default: return nil
            }
            buffer = buffer << 6 | value
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8((buffer >> UInt32(bits)) & 0xFF))
            }
        }
        if bits >= 6 { return nil }  // a lone trailing character is not valid
        return out
    }
}
