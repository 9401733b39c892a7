import Foundation

/// `openssl s_server -www` on a loopback port of its own with a fresh
/// self-signed certificate for 127.0.0.1: a real TLS server that answers
/// every GET with its status page.
final class TLSServer {
    let port: Int
    /// The PEM file of the certificate (its own CA).
    let certificate: String
    private let directory: URL
    private let process = Process()

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("happycurl-tls-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        certificate = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        let made = Process()
        made.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        made.arguments = ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
                          "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", certificate]
        made.standardError = FileHandle.nullDevice
        try made.run()
        made.waitUntilExit()
        guard made.terminationStatus == 0 else { throw TLSServerError("openssl req failed") }

        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["s_server", "-accept", "127.0.0.1:0", "-cert", certificate, "-key", key, "-www"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // s_server prints `ACCEPT 127.0.0.1:PORT` once it listens.
        var text = ""
        let deadline = Date(timeIntervalSinceNow: 20)
        while !text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().contains(where: { $0.hasPrefix("ACCEPT ") }),
              Date() < deadline {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("ACCEPT ") }),
              let port = line.split(separator: ":").last.flatMap({ Int($0) }) else {
            process.terminate()
            throw TLSServerError("openssl s_server did not say where it listens: \(text)")
        }
        self.port = port
    }

    deinit {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }
}

struct TLSServerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
