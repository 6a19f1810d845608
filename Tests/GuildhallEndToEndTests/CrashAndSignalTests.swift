// Durability through kill -9, and graceful SIGTERM, on the real binary.

import Foundation
import Glibc
import GuildhallClient
import GuildhallWire
import Synchronization
import Testing
@testable import GuildhallServer
import GuildhallCore

@Suite(.serialized) struct CrashAndSignalTests {
    /// A server started again hands out no session key of its earlier life:
    /// in a cluster, other nodes' homes may still hold sessions under those
    /// keys, and would take a new session for the old one (Place.nextSessionCounter).
    @Test func aRestartedServerHandsOutNoSessionKeyOfItsEarlierLife() async throws {
        let folder = NSTemporaryDirectory() + "guildhall-keys-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func keysOfOneLife() async throws -> [UInt64] {
            let server = try await ServerProcess(folder: folder)
            defer { server.signal(SIGTERM); _ = server.wait() }
            var keys: [UInt64] = []
            for user in ["kay", "lee", "kay"] {
                let client = GuildhallClient(port: server.port, token: TestServer.token(user))
                defer { client.close() }
                keys.append(try #require(SessionID.key(of: try await client.connect().sessionID)))
            }
            return keys
        }
        let first = try await keysOfOneLife(), second = try await keysOfOneLife()
        #expect(Set(first).count == 3 && Set(second).count == 3, "\(first) \(second)")
        #expect(Set(first).isDisjoint(with: second), "\(first) then \(second)")
    }

    /// Three rounds of: stream sends from 8 pipelining senders, kill -9 at a
    /// random point, restart. Every acknowledged message must be stored exactly
    /// once at its acknowledged seq, and seqs must stay strictly increasing.
    @Test func everyAcknowledgedMessageSurvivesKillMinus9DuringAStreamOfSends() async throws {
        let folder = NSTemporaryDirectory() + "guildhall-crash-\(UUID().uuidString)"
        var server = try await ServerProcess(folder: folder)
        let channel = try await crashChannel(server)
        let acked = Locked<[(uid: UInt64, seq: UInt64)]>([])
        for round in 0..<3 {
            let writer = GuildhallClient(port: server.port, token: TestServer.token("alice", device: "writer"))
            try await writer.connect()
            let target = acked.withLock { $0.count } + Int.random(in: 100...400)
            let senders = pipelinedSenders(writer, to: channel.channelID, tag: "r\(round)", into: acked)
            _ = try await waitFor("\(target) acknowledged sends", timeout: 60) { acked.withLock { $0.count } >= target ? true : nil }
            server.signal(SIGKILL)
            #expect(server.wait() != 0)
            writer.close()
            for s in senders { await s.value }
            server = try await ServerProcess(folder: folder)
        }
        defer { server.signal(SIGTERM); _ = server.wait() }
        let acknowledged = acked.withLock { $0 }

        let reader = GuildhallClient(port: server.port, token: TestServer.token("alice", device: "reader"))
        try await reader.connect()
        let stored = try await wholeHistory(of: channel.channelID, reader)
        let bySeq = Dictionary(stored.map { ($0.uid, $0.seq) }, uniquingKeysWith: { a, _ in a })
        #expect(bySeq.count == stored.count, "no message is stored twice")
        #expect(Set(stored.map(\.clientID)).count == stored.count, "no client id is stored twice")
        for a in acknowledged { #expect(bySeq[a.uid] == a.seq, "acknowledged \(a.uid) at seq \(a.seq)") }
        #expect(zip(stored, stored.dropFirst()).allSatisfy { $0.seq < $1.seq })
        // The store takes writes again after the crash.
        let next = try await reader.messages.send("after the crash", to: channel.channelID)
        #expect(next.seq == (stored.last?.seq ?? 0) + 1)
        reader.close()
    }

    /// Lone sends, each waited for, are answered once in the journal (a
    /// quiet server's path, LocalJournal.swift), and SQLite has them a
    /// moment later; `kill -9` right after an answer, three times: every
    /// acknowledged message is stored once at its seq, and history after
    /// each restart shows them all.
    @Test func everyAcknowledgedLoneSendSurvivesKillMinus9RightAfterItsAnswer() async throws {
        let folder = NSTemporaryDirectory() + "guildhall-crash-\(UUID().uuidString)"
        var server = try await ServerProcess(folder: folder)
        let channel = try await crashChannel(server)
        var acked: [(uid: UInt64, seq: UInt64)] = []
        var replays = 0
        for round in 0..<3 {
            let writer = GuildhallClient(port: server.port, token: TestServer.token("alice", device: "writer"))
            try await writer.connect()
            for i in 0..<Int.random(in: 20...60) {
                let m = try await writer.messages.send("r\(round)-\(i)", to: channel.channelID)
                acked.append((m.uid, m.seq))
            }
            server.signal(SIGKILL)
            #expect(server.wait() != 0)
            writer.close()
            server = try await ServerProcess(folder: folder)
            if server.logTail().contains("journal replayed") { replays += 1 }
            let reader = GuildhallClient(port: server.port, token: TestServer.token("alice", device: "reader\(round)"))
            try await reader.connect()
            let stored = try await wholeHistory(of: channel.channelID, reader)
            reader.close()
            #expect(stored.map(\.uid) == acked.map(\.uid) && stored.map(\.seq) == acked.map(\.seq), "round \(round)")
        }
        defer { server.signal(SIGTERM); _ = server.wait() }
        print("lone sends: \(acked.count) acknowledged, \(replays) of 3 restarts replayed journal records")
    }

    @Test func sigtermClosesSessionsWithAReasonAndExitsCleanly() async throws {
        let folder = NSTemporaryDirectory() + "guildhall-term-\(UUID().uuidString)"
        let server = try await ServerProcess(folder: folder)
        let client = GuildhallClient(port: server.port, token: TestServer.token("alice"))
        let events = Recorder()
        client.addListener(events)
        try await client.connect()
        let g = try await client.servers.create(name: "Term")
        server.signal(SIGTERM)
        #expect(try await events.closed() == .shuttingDown)
        #expect(server.wait() == 0)
        client.close()
        let again = try await ServerProcess(folder: folder)
        defer { again.signal(SIGTERM); _ = again.wait() }
        let back = GuildhallClient(port: again.port, token: TestServer.token("alice"))
        try await back.connect()
        #expect(try await back.servers.mine().map(\.serverID) == [g.serverID])
        back.close()
    }
}

extension CrashAndSignalTests {
    @Test func sighupRereadsTheConfigurationAndAppliesTheLiveThreshold() async throws {
        let folder = NSTemporaryDirectory() + "guildhall-hup-\(UUID().uuidString)"
        let config = folder + ".conf"
        try "small-server-threshold = 2000\n".write(toFile: config, atomically: true, encoding: .utf8)
        let server = try await ServerProcess(folder: folder, arguments: ["--config", config])
        defer { server.signal(SIGTERM); _ = server.wait() }
        let alice = GuildhallClient(port: server.port, token: TestServer.token("alice"))
        let bob = GuildhallClient(port: server.port, token: TestServer.token("bob"))
        let bobEvents = Recorder()
        bob.addListener(bobEvents)
        try await alice.connect()
        try await bob.connect()
        let g = try await alice.servers.create(name: "Hup")
        _ = try await bob.servers.join(g.serverID)
        let c = try await alice.channels.create(in: g.serverID, name: "c")
        let small = try await alice.messages.send("small", to: c.channelID)
        _ = try await bobEvents.message { $0.uid == small.uid }
        try "small-server-threshold = 2\n".write(toFile: config, atomically: true, encoding: .utf8)
        server.signal(SIGHUP)
        // The signal is handled asynchronously: send until a message stops reaching bob (bounded).
        var applied = false
        for i in 0..<100 where !applied {
            let m = try await alice.messages.send("probe \(i)", to: c.channelID)
            let sentinel = try await alice.messages.send("@bob \(i)", to: c.channelID, mentions: ["bob"])
            _ = try await bobEvents.message { $0.uid == sentinel.uid }
            applied = !bobEvents.messages.contains { $0.uid == m.uid }
        }
        #expect(applied, "after SIGHUP the server counts as large and bob, unsubscribed, no longer receives")
        alice.close()
        bob.close()
    }
}

extension TestServer {
    static func token(_ user: String, device: String = "d1") -> String {
        AccessToken(user: user, device: device, expiry: systemClock() / 1000 + 3600).signed(with: Array(testSecret.utf8))
    }
}

/// Eight tasks pipelining sends on `writer` until its connection fails;
/// each acknowledged send's (uid, seq) is added to `acked`.
/// A guild and channel alice made on `server`, for sends to survive its crashes.
func crashChannel(_ server: ServerProcess) async throws -> GHChannelInfo {
    let setup = GuildhallClient(port: server.port, token: TestServer.token("alice", device: "setup"))
    try await setup.connect()
    defer { setup.close() }
    let g = try await setup.servers.create(name: "Crash")
    return try await setup.channels.create(in: g.serverID, name: "stream")
}

/// Every message of `channel`, oldest first, page by page.
func wholeHistory(of channel: UInt64, _ reader: GuildhallClient) async throws -> [GHChannelMessage] {
    var stored: [GHChannelMessage] = []
    while true {
        let page = try await reader.messages.history(of: channel, after: stored.last?.seq ?? 0, limit: 100)
        stored += page.messages
        if !page.moreAvailable { return stored }
    }
}

func pipelinedSenders(_ writer: GuildhallClient, to channel: UInt64, tag: String,
                      into acked: Locked<[(uid: UInt64, seq: UInt64)]>) -> [Task<Void, Never>] {
    (0..<8).map { worker in
        Task {
            var i = 0
            while true {
                do {
                    let id = "\(tag)-w\(worker)-\(i)"
                    let m = try await writer.messages.send(id, to: channel, clientID: id)
                    acked.withLock { $0.append((m.uid, m.seq)) }
                    i += 1
                } catch { return }
            }
        }
    }
}
