import COpenSSL
import HappyCore

/// HMAC-SHA256 from OpenSSL, for access tokens.
public enum HMACSHA256 {
    public static func digest(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        let length = key.withUnsafeBytes { keyBytes in
            message.withUnsafeBufferPointer { messageBytes in
                happy_hmac_sha256(keyBytes.baseAddress, Int32(key.count), messageBytes.baseAddress,
                                  message.count, &out)
            }
        }
        return Array(out.prefix(Int(length)))
    }

    /// A token verifier for `secret` backed by OpenSSL, requiring `audience` and `issuer` when not empty.
    public static func verifier(secret: String, audience: String = "", issuer: String = "") -> TokenVerifier {
        TokenVerifier(secret: secret, audience: audience, issuer: issuer) { key, message in digest(key: key, message: message) }
    }

    /// The verifier of a configuration's `auth` keys; nil when no secret is set.
    public static func verifier(for auth: HappyConfig.AuthSection) -> TokenVerifier? {
        auth.secret.isEmpty ? nil : verifier(secret: auth.secret, audience: auth.audience, issuer: auth.issuer)
    }
}
