// Durability and crashes (docs/reliability.md): D5, SIGTERM while clients write.

import Foundation
import Glibc
import GuildhallWire

enum ShutdownChecks {
    /// D5: clients subscribed to a busy channel, with a backlog on its way to
    /// them, keep writing when the server gets SIGTERM. Pass: every one gets
    /// its backlog and SHUTTING_DOWN; the server exits 0 within 10 s. (Before the
    /// lingering close, closing a socket with unread input reset it and the kernel
    /// dropped what it had not sent: 19 of 20 clients lost backlog and close reason.)
    static func sigtermWhileWriting(_ profile: ReliabilityProfile, _ seed: UInt64) throws -> CheckOutcome {
        let count = profile == .full ? 40 : 20, backlog = profile == .full ? 300 : 100
        let server = try ReliabilityServer()
        defer { server.stop() }
        let owner = try ProbeClient(port: server.port)
        guard owner.login(server.token("d5-owner")) != nil else { throw BenchError("login failed") }
        let (serverID, channelID) = try owner.createGuild("D5", channel: "busy")
        var clients: [ProbeClient] = []
        for i in 0..<count {
            let c = try ProbeClient(port: server.port, receiveBuffer: 4096)
            guard c.login(server.token("d5-\(i)")) != nil else { throw BenchError("login failed") }
            c.joinAndSubscribe(server: serverID, channel: channelID)
            clients.append(c)
        }
        for i in 0..<backlog {
            var send = GHSendMessage()
            send.channelID = channelID
            send.body.text = "\(i) " + String(repeating: "x", count: 1000)
            owner.call(.sendMessage(send))
        }
        var heartbeat = GHFrame()
        heartbeat.request.id = 9
        heartbeat.request.heartbeat = GHHeartbeat()
        let beat = FrameEncoding.framed(heartbeat)
        for c in clients { c.send(beat, dontWait: true) }
        let signalled = Date()
        server.signal(SIGTERM)
        var reasons = [[GHCloseReason]](repeating: [], count: count), messages = [Int](repeating: 0, count: count)
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, clients.contains(where: { !$0.ended }) {
            for (i, c) in clients.enumerated() where !c.ended {
                c.send(beat, dontWait: true)
                while let f = c.next(until: Date().addingTimeInterval(0.001)) {
                    if case .closed(let r)? = f.event.body { reasons[i].append(r.reason) }
                    if case .message? = f.event.body { messages[i] += 1 }
                }
            }
        }
        let status = server.waitExit(timeout: max(0, 10 - Date().timeIntervalSince(signalled)))
        let exited = Date().timeIntervalSince(signalled)
        let whole = (0..<count).filter { reasons[$0] == [.shuttingDown] && messages[$0] == backlog }.count
        return CheckOutcome(passed: whole == count && status == 0,
                            figures: String(format: "%d clients writing, %d-message backlog each: %d got all of it and SHUTTING_DOWN; exit status %@ after %.1f s",
                                            count, backlog, whole, status.map { "\($0)" } ?? "none", exited))
    }
}
