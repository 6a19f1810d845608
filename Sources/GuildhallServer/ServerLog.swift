// Structured log lines (logfmt) on stderr: time, level, message, then
// key=value pairs. Sendable and lock-free: each line is one write(2).

import Foundation

public struct ServerLog: Sendable {
    public enum Level: Int, Sendable, Comparable {
        case debug, info, warn, error
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
        init(_ text: String) {
            switch text.lowercased() {
            case "debug": self = .debug
            case "warn": self = .warn
            case "error": self = .error
            default: self = .info
            }
        }
    }

    public let threshold: Level

    public init(level: String) { threshold = Level(level) }

    public func debug(_ message: String, _ fields: KeyValuePairs<String, Any> = [:]) { write(.debug, message, fields) }
    public func info(_ message: String, _ fields: KeyValuePairs<String, Any> = [:]) { write(.info, message, fields) }
    public func warn(_ message: String, _ fields: KeyValuePairs<String, Any> = [:]) { write(.warn, message, fields) }
    public func error(_ message: String, _ fields: KeyValuePairs<String, Any> = [:]) { write(.error, message, fields) }

    private func write(_ level: Level, _ message: String, _ fields: KeyValuePairs<String, Any>) {
        guard level >= threshold else { return }
        var line = "time=\(Self.timestamp()) level=\(level) msg=\(Self.quote(message))"
        for (k, v) in fields { line += " \(k)=\(Self.quote(String(describing: v)))" }
        line += "\n"
        let bytes = Array(line.utf8)
        _ = bytes.withUnsafeBytes { Foundation.write(2, $0.baseAddress, $0.count) }
    }

    private static func quote(_ s: String) -> String {
        if !s.isEmpty && !s.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline }) { return s }
        return "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n") + "\""
    }

    private static func timestamp() -> String {
        var tv = timeval()
        gettimeofday(&tv, nil)
        var t = time_t(tv.tv_sec)
        var parts = tm()
        gmtime_r(&t, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                      parts.tm_hour, parts.tm_min, parts.tm_sec, Int(tv.tv_usec / 1000))
    }
}
