// docs/reliability.md S4: a client that stops reading (frozen, as by SIGSTOP) while
// its kernel still takes the bytes is found by the events it does not
// acknowledge, and cut within the write-stall time, long before the kernel's
// buffers fill; a healthy client acknowledging as the SDK does is not.

import Foundation
import GuildhallClient
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite struct FrozenClientTests {
    @Test func aFrozenSubscriberIsCutWithinTheStallTimeAndAHealthyOneIsNot() async throws {
        let stallMs = 2_000
        let server = try TestServer { $0.writeStallMs = stallMs }
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let g = try await alice.servers.create(name: "Frozen")
        let channel = try await alice.channels.create(in: g.serverID, name: "news")
        let (carol, carolHeard) = try await server.client("carol")
        _ = try await carol.servers.join(g.serverID)
        try await carol.sub(.channelMsg, g.serverID, [channel.channelID])

        // bob subscribes, then neither reads nor acknowledges again.
        let bob = try RawConnection(port: server.port)
        bob.login(server.token("bob"))
        let login = try #require(bob.nextFrame()?.response.login)
        var join = GHRequest()
        join.id = 2
        join.joinServer.serverID = g.serverID
        bob.send(join)
        while let f = bob.nextFrame(), f.response.id != 2 {}
        bob.subscribeToMessages(server: g.serverID, channel: channel.channelID, id: 3)

        // Up to 50 messages of 1 KB a second: a few hundred KB in all, which the kernel's buffers take whole.
        // On until the stall time has passed with over 64 KiB unacknowledged (100 messages), and a
        // sweep more (a loaded machine sends slower).
        let started = Date()
        var sent: [UInt64] = []
        var enough: Date?
        while enough.map({ Date() < $0.addingTimeInterval(1.5) }) ?? true {
            sent.append(try await alice.messages.send(String(repeating: "n", count: 1000), to: channel.channelID).uid)
            if enough == nil, sent.count >= 100, Date().timeIntervalSince(started) >= Double(stallMs) / 1000 { enough = Date() }
            try await Task.sleep(for: .milliseconds(20))
        }
        let again = try RawConnection(port: server.port)
        again.resume(server.token("bob"), sessionID: login.sessionID, lastEventSeq: bob.lastEventSeq)
        let answer = again.nextFrame()?.response.login
        #expect(answer?.resumed == true)
        #expect(answer?.previousCloseReason == .slowConsumer, "the frozen client was cut as a slow consumer")
        _ = try await waitFor("carol to hear every message", timeout: 10) { carolHeard.messages.count >= sent.count ? true : nil }
        #expect(carolHeard.closes.isEmpty, "the healthy client acknowledges and is not cut")
    }
}
