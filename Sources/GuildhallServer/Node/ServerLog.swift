// The server's one structured logger: swift-log's `Logger`, with a handler
// (`LineLogHandler`) that writes one line per entry on stderr, as logfmt or
// JSON (setting `log-format`). `ServerLog` keeps the call sites short
// (`log.info("message", ["key": value])`) and rate-limits warnings that
// come in floods (a fuzzer's oversize frames): `warnRepeated` writes the
// first of a kind, then at most one line per interval with the count it
// held back, counted over all loops. Sendable: lines are one write(2) each;
// the throttle is a lock.

import Foundation
import Logging
import Synchronization

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

        var swiftLog: Logger.Level {
            switch self {
            case .debug: .debug
            case .info: .info
            case .warn: .warning
            case .error: .error
            }
        }
    }

    public let threshold: Level
    private let logger: Logger
    private let throttle: LogThrottle

    public init(level: String, format: String = "logfmt") {
        threshold = Level(level)
        var logger = Logger(label: "guildhall") { _ in LineLogHandler(json: format == "json") }
        logger.logLevel = threshold.swiftLog
        self.logger = logger
        throttle = LogThrottle.process
    }

    public func debug(_ message: String, _ fields: KeyValuePairs<String, Any> = [:]) { write(.debug, message, fields) }
    public func info(_ message: String, _ fields: KeyValuePairs<String, Any> = [:]) { write(.info, message, fields) }
    public func warn(_ message: String, _ fields: KeyValuePairs<String, Any> = [:]) { write(.warn, message, fields) }
    public func error(_ message: String, _ fields: KeyValuePairs<String, Any> = [:]) { write(.error, message, fields) }

    /// A warning that may come in floods: the first of `message` is written,
    /// then at most one per `intervalMs`, carrying how many were held back.
    public func warnRepeated(_ message: String, _ fields: KeyValuePairs<String, Any> = [:], intervalMs: UInt64 = 10_000) {
        writeRepeated(.warn, message, fields, intervalMs: intervalMs)
    }

    /// As `warnRepeated`, at info.
    public func infoRepeated(_ message: String, _ fields: KeyValuePairs<String, Any> = [:], intervalMs: UInt64 = 10_000) {
        writeRepeated(.info, message, fields, intervalMs: intervalMs)
    }

    private func writeRepeated(_ level: Level, _ message: String, _ fields: KeyValuePairs<String, Any>, intervalMs: UInt64) {
        guard level >= threshold, let heldBack = throttle.admit(message, intervalMs: intervalMs) else { return }
        var metadata = Self.metadata(fields)
        if heldBack > 0 { metadata["repeated"] = .string(String(heldBack)) }
        logger.log(level: level.swiftLog, Logger.Message(stringLiteral: message), metadata: metadata)
    }

    private func write(_ level: Level, _ message: String, _ fields: KeyValuePairs<String, Any>) {
        guard level >= threshold else { return }
        logger.log(level: level.swiftLog, Logger.Message(stringLiteral: message), metadata: Self.metadata(fields))
    }

    private static func metadata(_ fields: KeyValuePairs<String, Any>) -> Logger.Metadata {
        var m: Logger.Metadata = [:]
        for (k, v) in fields { m[k] = .string(String(describing: v)) }
        return m
    }
}

/// Per message, when the last line went out and how many were held back since.
final class LogThrottle: Sendable {
    /// One for the whole process: a flood spread over every loop still writes one line per interval.
    static let process = LogThrottle()

    private let state = Mutex<[String: (last: UInt64, heldBack: Int)]>([:])

    /// The count held back since the last line when a line may go out now; nil to hold this one back.
    func admit(_ key: String, intervalMs: UInt64) -> Int? {
        let now = DispatchTime.now().uptimeNanoseconds / 1_000_000
        return state.withLock { s in
            if let entry = s[key], now < entry.last + intervalMs {
                s[key]!.heldBack += 1
                return nil
            }
            let held = s[key]?.heldBack ?? 0
            s[key] = (now, 0)
            return held
        }
    }
}

/// One line per entry on stderr: logfmt (`time=… level=… msg=… key=value`) or a JSON object.
struct LineLogHandler: LogHandler {
    let json: Bool
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let bytes = Array(line(event, time: Self.timestamp()).utf8)
        _ = bytes.withUnsafeBytes { Foundation.write(2, $0.baseAddress, $0.count) }
    }

    /// The entry as one line (with its newline).
    func line(_ event: LogEvent, time: String) -> String {
        let level = switch event.level {
        case .trace, .debug: "debug"
        case .info, .notice: "info"
        case .warning: "warn"
        case .error, .critical: "error"
        }
        var fields = metadata
        for (k, v) in event.metadata ?? [:] { fields[k] = v }
        let ordered = fields.sorted { $0.key < $1.key }
        var line: String
        if json {
            var object: [String: String] = ["time": time, "level": level, "msg": event.message.description]
            for (k, v) in ordered { object[k] = v.description }
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
            line = String(decoding: data, as: UTF8.self)
        } else {
            line = "time=\(time) level=\(level) msg=\(Self.quote(event.message.description))"
            for (k, v) in ordered { line += " \(k)=\(Self.quote(v.description))" }
        }
        return line + "\n"
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
