// Slow consumers and backpressure (docs/reliability.md): S4, a subscriber frozen
// by SIGSTOP (a real `guildhall client` process) while messages flow to it.

import Foundation
import Glibc
import GuildhallWire

enum BackpressureChecks {
    /// S4: pass when the server cuts the frozen subscriber within write-stall-ms + 1 s of SIGSTOP.
    static func frozenSubscriber(_ profile: ReliabilityProfile, _ seed: UInt64) throws -> CheckOutcome {
        let stallMs = profile == .full ? 10_000 : 2_000, rate = 50
        let server = try ReliabilityServer(["write-stall-ms=\(stallMs)"])
        defer { server.stop() }
        let owner = try ProbeClient(port: server.port)
        guard owner.login(server.token("s4-owner")) != nil else { throw BenchError("login failed") }
        let (serverID, channelID) = try owner.createGuild("S4", channel: "news")

        // The subscriber: the terminal client in JSON mode, joined and subscribed.
        let frozen = Process()
        frozen.executableURL = URL(fileURLWithPath: BenchTargets.serverPath)
        frozen.arguments = ["client", "--json", "--server", "127.0.0.1:\(server.port)", "--token", server.token("s4-frozen")]
        let input = Pipe(), output = Pipe()
        frozen.standardInput = input
        frozen.standardOutput = output
        frozen.standardError = FileHandle.nullDevice
        try frozen.run()
        defer {
            kill(frozen.processIdentifier, SIGCONT)
            frozen.terminate()
            frozen.waitUntilExit()
        }
        func command(_ json: String) { input.fileHandleForWriting.write(Data((json + "\n").utf8)) }
        command(#"{"cmd":"join","server":\#(serverID)}"#)
        command(#"{"cmd":"subscribe","type":"channel_msg","server":\#(serverID),"channels":\#(channelID)}"#)
        // Subscribed once a message reaches it.
        var send = GHSendMessage()
        send.channelID = channelID
        send.body.text = String(repeating: "s", count: 1000)
        let reader = output.fileHandleForReading
        let subscribedBy = Date().addingTimeInterval(15)
        var seen = ""
        while !seen.contains("\"event\":\"message\"") && Date() < subscribedBy {
            owner.call(.sendMessage(send))
            usleep(100_000)
            seen += String(decoding: reader.availableDataNonBlocking(), as: UTF8.self)
        }
        guard seen.contains("\"event\":\"message\"") else { return CheckOutcome(passed: false, figures: "the subscriber never heard a message") }

        let cutsBefore = server.metric("guildhall_slow_consumer_cuts_total") ?? 0
        kill(frozen.processIdentifier, SIGSTOP)
        let stopped = Date()
        let bound = Double(stallMs) / 1000 + 1
        var sent = 0
        var cutAfter: Double?
        while Date().timeIntervalSince(stopped) < bound + 10 {
            owner.call(.sendMessage(send))
            sent += 1
            if sent % 2 == 0, (server.metric("guildhall_slow_consumer_cuts_total") ?? 0) > cutsBefore {
                cutAfter = Date().timeIntervalSince(stopped)
                break
            }
            usleep(UInt32(1_000_000 / rate))
        }
        let figures = cutAfter.map { String(format: "%d msg/s of 1 KB: cut %.1f s after SIGSTOP (bound %.0f s), %d KB sent meanwhile", rate, $0, bound, sent) }
            ?? String(format: "%d msg/s of 1 KB: not cut within %.0f s of SIGSTOP", rate, bound + 10)
        return CheckOutcome(passed: (cutAfter ?? .infinity) <= bound, figures: figures)
    }
}

extension FileHandle {
    /// What can be read now without blocking.
    func availableDataNonBlocking() -> Data {
        var p = pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)
        var out = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while poll(&p, 1, 0) > 0 {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fileDescriptor, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            out.append(contentsOf: buffer[0..<n])
        }
        return out
    }
}
