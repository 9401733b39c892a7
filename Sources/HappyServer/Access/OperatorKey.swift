import Foundation
import HappyCore

/// The server's own operator credential, for when no `auth.secret` mints
/// admin tokens (PROTOCOL.md section 13): 32 random bytes in base64url, made
/// on first start and kept in the data directory, readable by the server's
/// user only, so it survives restarts and upgrades.
public struct OperatorKey: Sendable {
    public static let fileName = "operator.key"

    /// The credential, as sent in `Authorization: Bearer`.
    public let value: String
    /// The file it is kept in.
    public let path: String

    /// Reads the key in `dataDir`, or makes one. Throws with what to fix when
    /// the file cannot be read or written, or holds no usable key.
    public static func loadOrCreate(dataDir: String) throws(ServerError) -> OperatorKey {
        let path = (dataDir as NSString).appendingPathComponent(fileName)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            var generator = SystemRandomNumberGenerator()
            let value = Base64URL.encode((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
            let bytes = Array((value + "\n").utf8)
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            let synced = fsync(descriptor) == 0
            close(descriptor)
            guard written == bytes.count, synced else {
                unlink(path)
                throw ServerError("could not write the operator key \(path): \(String(cString: strerror(errno)))")
            }
            return OperatorKey(value: value, path: path)
        }
        guard errno == EEXIST else {
            throw ServerError("could not create the operator key \(path): \(String(cString: strerror(errno))); "
                + "check that dataDir is writable by the server's user")
        }
        // Whatever the file was created with, it stays the server's alone.
        chmod(path, 0o600)
        guard let data = FileManager.default.contents(atPath: path),
              let text = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines) else {
            throw ServerError("could not read the operator key \(path); fix its permissions, or delete it to make a new one")
        }
        guard text.utf8.count >= 32, Base64URL.decode(text) != nil else {
            throw ServerError("the operator key \(path) is not a key (32 or more base64url characters); "
                + "delete it and restart to make a new one")
        }
        return OperatorKey(value: text, path: path)
    }

    /// Whether `credential` is this key, compared in constant time.
    public func matches(_ credential: String) -> Bool {
        TokenVerifier.constantTimeEqual(Array(credential.utf8), Array(value.utf8))
    }

    /// The inspector's address with the key in its fragment, which browsers never send.
    public func inspectorURL(scheme: String, host: String, port: Int) -> String {
        let name: String
        switch host {
        case "0.0.0.0", "": name = "127.0.0.1"
        case "::": name = "[::1]"
        default: name = host.contains(":") ? "[\(host)]" : host
        }
        return "\(scheme)://\(name):\(port)/admin#key=\(value)"
    }
}
