import Foundation
import Synchronization
import HappyCore

/// Severity of a log line, ordered.
public enum LogLevel: Int, Comparable, Sendable {
    case debug, info, warn, error

    public init?(name: String) {
        switch name {
        case "debug": self = .debug
        case "info": self = .info
        case "warn": self = .warn
        case "error": self = .error
        default: return nil
        }
    }

    public var name: String {
        switch self {
        case .debug: return "debug"
        case .info: return "info"
        case .warn: return "warn"
        case .error: return "error"
        }
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Writes one line per record to standard error: `text` for people, `json`
/// (one object per line) for log collectors. Fields keep their order.
public final class Logger: @unchecked Sendable {
    public let json: Bool
    private let lock = NSLock()
    /// Changed by a reload (SIGHUP) while other threads log.
    private let level: Atomic<Int>

    public init(level: LogLevel = .info, json: Bool = false) {
        self.level = Atomic(level.rawValue)
        self.json = json
    }

    public var minimumLevel: LogLevel { LogLevel(rawValue: level.load(ordering: .relaxed)) ?? .info }

    /// Lines below `level` are left out from now on.
    public func setLevel(_ newLevel: LogLevel) {
        level.store(newLevel.rawValue, ordering: .relaxed)
    }

    public func isEnabled(_ level: LogLevel) -> Bool { level >= minimumLevel }

    public func debug(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> KeyValuePairs<String, String> = [:]) {
        log(.debug, message(), fields())
    }

    public func info(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> KeyValuePairs<String, String> = [:]) {
        log(.info, message(), fields())
    }

    public func warn(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> KeyValuePairs<String, String> = [:]) {
        log(.warn, message(), fields())
    }

    public func error(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> KeyValuePairs<String, String> = [:]) {
        log(.error, message(), fields())
    }

    /// Lifecycle lines (listening, stopped) that tools wait for: written at
    /// `info` whatever the configured level.
    public func lifecycle(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        write(.info, message, fields)
    }

    public func log(_ level: LogLevel, _ message: String, _ fields: KeyValuePairs<String, String>) {
        guard level >= minimumLevel else { return }
        write(level, message, fields)
    }

    /// A line whose fields are put together at run time.
    public func log(_ level: LogLevel, _ message: String, fields: [(key: String, value: String)]) {
        guard level >= minimumLevel else { return }
        write(level, message, fields)
    }

    private func write(_ level: LogLevel, _ message: String, _ fields: some Sequence<(key: String, value: String)>) {
        let line = json ? jsonLine(level, message, fields) : textLine(level, message, fields)
        lock.lock()
        FileHandle.standardError.write(line)
        lock.unlock()
    }

    private func timestamp() -> String {
        let ms = SystemTime.wallMilliseconds()
        let date = Date(timeIntervalSince1970: Double(ms) / 1000)
        var text = date.ISO8601Format(.iso8601.year().month().day().time(includingFractionalSeconds: true))
        if !text.hasSuffix("Z") { text += "Z" }
        return text
    }

    private func textLine(_ level: LogLevel, _ message: String, _ fields: some Sequence<(key: String, value: String)>) -> Data {
        var line = "\(timestamp()) \(level.name.uppercased()) \(message)"
        for (key, value) in fields {
            let needsQuotes = value.isEmpty || value.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" })
            line += needsQuotes ? " \(key)=\"\(value.replacingOccurrences(of: "\"", with: "\\\""))\"" : " \(key)=\(value)"
        }
        return Data((line + "\n").utf8)
    }

    private func jsonLine(_ level: LogLevel, _ message: String, _ fields: some Sequence<(key: String, value: String)>) -> Data {
        var writer = JSONWriter(capacity: 160)
        writer.beginObject()
        writer.key("time"); writer.string(timestamp())
        writer.key("level"); writer.string(level.name)
        writer.key("msg"); writer.string(message)
        for (key, value) in fields {
            writer.key(key); writer.string(value)
        }
        writer.endObject()
        var bytes = writer.bytes
        bytes.append(0x0A)
        return Data(bytes)
    }
}
