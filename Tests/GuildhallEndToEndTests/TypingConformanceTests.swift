// README "What clients receive", one test per rule: the send right, the per-user
// throttle, coalesced frames with the typer list, never to the typer's own
// sessions, expiry, and a message ending the state.

import Foundation
import GuildhallClient
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite struct TypingConformanceTests {
    /// alice owns a server with bob and dave; bob subscribes typing.
    func setUp(_ server: TestServer) async throws -> (GuildhallClient, GuildhallClient, GuildhallClient, Recorder, GHChannelInfo) {
        let (alice, _) = try await server.client("alice")
        let (bob, bobEvents) = try await server.client("bob")
        let (dave, _) = try await server.client("dave")
        let (g, c) = try await guild(server, owner: alice, members: [bob, dave])
        try await bob.sub(.channelTyping, g.serverID, [c.channelID])
        return (alice, bob, dave, bobEvents, c)
    }

    @Test func typingNeedsTheSendRight() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (eve, _) = try await server.client("eve")
        let g = try await alice.createServer(name: "G", openJoin: false)
        _ = try await alice.updateServer(g.serverID, allowGuests: true)
        let c = try await alice.createChannel(in: g.serverID, name: "c")
        await expectError(.notFound) { try await eve.sendTyping(c.channelID) }
        try await eve.enterAsGuest(g.serverID)
        await expectError(.forbidden) { try await eve.sendTyping(c.channelID) }
    }

    @Test func extraTypingWithinTheThrottleIsDroppedQuietlyAndFramesCarryTheCurrentTypers() async throws {
        // A throttle no loaded machine outlasts between alice's five typings.
        let server = try TestServer {
            $0.typingThrottleMs = 60_000
            $0.typingExpiryMs = 120_000
        }
        defer { server.stop() }
        let (alice, _, dave, bobEvents, c) = try await setUp(server)
        for _ in 0..<5 { try await alice.sendTyping(c.channelID) }
        let first = try await waitFor("a typing frame") { bobEvents.typings.first }
        #expect(first.typers.map(\.userID) == ["alice"])
        try await dave.sendTyping(c.channelID)
        let second = try await waitFor("a frame with dave") { bobEvents.typings.first { $0.typers.contains { $0.userID == "dave" } } }
        #expect(second.typers.map(\.userID) == ["alice", "dave"])
        #expect(bobEvents.typings.count == 2, "five typings from alice made one frame")
    }

    @Test func theTypersOwnSessionsNeverReceiveTheirTyping() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _, dave, _, c) = try await setUp(server)
        let (aliceLaptop, laptopEvents) = try await server.client("alice", device: "laptop")
        try await aliceLaptop.sub(.channelTyping, c.serverID, [c.channelID])
        try await alice.sendTyping(c.channelID)
        try await dave.sendTyping(c.channelID)
        _ = try await waitFor("dave's typing") { laptopEvents.typings.first { !$0.typers.isEmpty } }
        // Not even a frame with an empty list for alice's own typing.
        #expect(laptopEvents.typings.map { $0.typers.map(\.userID) } == [["dave"]])
    }

    @Test func aTypingStateExpiresAfterItsTime() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _, dave, bobEvents, c) = try await setUp(server)
        try await alice.sendTyping(c.channelID)
        _ = try await waitFor("alice typing") { bobEvents.typings.first }
        server.clock.advance(ms: 11_000)
        try await dave.sendTyping(c.channelID)
        let later = try await waitFor("dave typing") { bobEvents.typings.first { $0.typers.contains { $0.userID == "dave" } } }
        #expect(later.typers.map(\.userID) == ["dave"], "alice's state expired 10 s after she typed")
    }

    @Test func sendingAMessageEndsTheTypingState() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _, _, bobEvents, c) = try await setUp(server)
        try await alice.sendTyping(c.channelID)
        _ = try await waitFor("alice typing") { bobEvents.typings.first { !$0.typers.isEmpty } }
        _ = try await alice.send("done typing", to: c.channelID)
        let cleared = try await waitFor("the typer list to empty") { bobEvents.typings.first { $0.typers.isEmpty } }
        #expect(cleared.channelID == c.channelID)
    }
}
