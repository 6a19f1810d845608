// Sessions: several devices per user, replacement on the same device, the
// per-user limit, graceful shutdown and automatic reconnect.

import Foundation
import GuildhallClient
import GuildhallWire
import Testing

@Suite struct SessionTests {
    @Test func aLoginOnTheSameDeviceReplacesTheOldSession() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (old, oldEvents) = try await server.client("alice", device: "phone")
        let (new, _) = try await server.client("alice", device: "phone")
        #expect(try await oldEvents.closed() == .replaced)
        // The replaced client does not fight back by reconnecting.
        _ = try await waitFor("the old client to give up") {
            oldEvents.events.withLock { $0.contains { if case .status(.closed) = $0 { true } else { false } } } ? true : nil
        }
        #expect(!old.isConnected)
        #expect(try await new.heartbeat() > 0)
    }

    @Test func aUserMayHaveAtMostTheConfiguredNumberOfSessions() async throws {
        let server = try TestServer { try $0.set("max-sessions-per-user", "2") }
        defer { server.stop() }
        _ = try await server.client("alice", device: "a")
        _ = try await server.client("alice", device: "b")
        let third = GuildhallClient(port: server.port, token: server.token("alice", device: "c"))
        do {
            try await third.connect()
            Issue.record("a third session was admitted")
        } catch let e as GuildhallError {
            #expect(e.code == .limitReached)
        }
        third.close()
        // Replacing an existing device is still allowed at the limit.
        _ = try await server.client("alice", device: "b")
    }

    @Test func gracefulShutdownTellsEverySessionAndLeaksNoHandle() async throws {
        let server = try TestServer()
        let (alice, aliceEvents) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (_, channel) = try await guild(server, owner: alice, members: [bob])
        _ = try await alice.send("last words", to: channel.channelID)
        #expect(server.stop() == 0)
        #expect(try await aliceEvents.closed() == .shuttingDown)
        #expect(try await bobEvents.closed() == .shuttingDown)
        alice.close()
        bob.close()
    }

    @Test func theClientReconnectsByItselfAfterTheServerRestarts() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, events) = try await server.client("alice")
        let (_, channel) = try await guild(server, owner: alice, members: [])
        try server.restart()
        _ = try await waitFor("a second login") { events.connectedCount >= 2 ? true : nil }
        let sent = try await alice.send("back again", to: channel.channelID)
        #expect(sent.seq == 1)
    }

    @Test func requestsWhileDisconnectedFailFastInsteadOfHanging() async throws {
        let server = try TestServer()
        let (alice, _) = try await server.client("alice")
        server.stop()
        _ = try await waitFor("the client to notice") { alice.isConnected ? nil : true }
        do {
            _ = try await alice.myServers()
            Issue.record("a request succeeded with no server")
        } catch let e as ClientError {
            #expect(e == .notConnected)
        }
        alice.close()
    }
}
