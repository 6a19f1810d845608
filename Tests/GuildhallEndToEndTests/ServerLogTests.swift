// The server's log lines (docs/operating.md): logfmt or JSON, and floods of one
// warning held back to a line per interval with the count.

import Foundation
import Logging
import Testing
@testable import GuildhallServer

@Suite struct ServerLogTests {
    func event(_ message: String, _ metadata: Logger.Metadata) -> LogEvent {
        LogEvent(level: .warning, message: Logger.Message(stringLiteral: message), metadata: metadata, source: nil, file: "", function: "", line: 0)
    }

    @Test func aLineIsLogfmtOrOneJSONObject() throws {
        let e = event("session closed", ["reason": "slowConsumer", "detail": "more than 4194304 bytes queued"])
        let logfmt = LineLogHandler(json: false).line(e, time: "T")
        #expect(logfmt == "time=T level=warn msg=\"session closed\" detail=\"more than 4194304 bytes queued\" reason=slowConsumer\n")
        let json = LineLogHandler(json: true).line(e, time: "T")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String])
        #expect(object == ["time": "T", "level": "warn", "msg": "session closed", "reason": "slowConsumer", "detail": "more than 4194304 bytes queued"])
        #expect(json.hasSuffix("}\n") && json.filter { $0 == "\n" }.count == 1)
    }

    @Test func aFloodOfOneWarningIsHeldBackToALinePerIntervalWithTheCount() {
        let throttle = LogThrottle()
        #expect(throttle.admit("frame too large", intervalMs: 60_000) == 0, "the first goes out")
        for _ in 0..<7_356 { #expect(throttle.admit("frame too large", intervalMs: 60_000) == nil) }
        #expect(throttle.admit("another warning", intervalMs: 60_000) == 0, "other warnings are not held back")
        #expect(throttle.admit("frame too large", intervalMs: 0) == 7_356, "the next line carries what was held back")
    }
}
