// Sends a client writes together, read as one run (Gateway/SendRun.swift,
// `Home.sendRun`): each is answered, refused and stored exactly as if it
// had come alone. The checks a run makes once hold for every send in it, a
// change between two runs holds for the next, and a run paused part way
// (the store queue) keeps its order. Driven over a bare connection, so the
// frames reach the server in one write.

import Foundation
import GuildhallClient
import GuildhallWire
import Testing
@testable import GuildhallServer

/// A send request's frame; `text` nil sends an empty body.
func sendFrame(_ id: UInt64, to channel: UInt64, _ text: String?, clientID: String = "") -> [UInt8] {
    var r = GHRequest()
    r.id = id
    r.sendMessage.channelID = channel
    if let text { r.sendMessage.body.text = text }
    r.sendMessage.clientID = clientID
    var f = GHFrame()
    f.request = r
    return FrameEncoding.framed(f)
}

extension RawConnection {
    /// The answers to requests `ids`, by id, read until all came or `timeout` passed (events between are passed over).
    func answers(_ ids: some Sequence<UInt64>, timeout: Double = 10) -> [UInt64: GHResponse] {
        var waiting = Set(ids), answers: [UInt64: GHResponse] = [:]
        let deadline = Date().addingTimeInterval(timeout)
        while !waiting.isEmpty, let f = nextFrame(timeout: max(0, deadline.timeIntervalSinceNow)) {
            guard case .response(let r)? = f.kind, waiting.remove(r.id) != nil else { continue }
            answers[r.id] = r
        }
        return answers
    }
}

extension RawConnection {
    /// Sends `ids` to `channel` in one write and returns what each stored, in id order (a refusal or a missing answer is left out).
    func sendInOneWrite(_ ids: Range<UInt64>, to channel: UInt64, _ text: (UInt64) -> String) -> [GHChannelMessage] {
        send(ids.flatMap { sendFrame($0, to: channel, text($0)) })
        let answers = answers(ids, timeout: 30)
        return ids.compactMap { stored(answers[$0]) }
    }
}

/// The stored message an answer holds, if it holds one.
private func stored(_ r: GHResponse?) -> GHChannelMessage? {
    if case .message(let m)? = r?.result { m } else { nil }
}

/// alice's guild with bob as a member, bob's SDK client's recorder (his
/// other device), and bob logged in on a bare connection (device "raw").
struct RunSetUp {
    let alice: GuildhallClient
    let bobHears: Recorder
    let guild: GHServerInfo
    let channel: GHChannelInfo
    let bob: RawConnection

    init(_ server: TestServer) async throws {
        (alice, _) = try await server.client("alice")
        let (bobClient, hears) = try await server.client("bob")
        bobHears = hears
        (guild, channel) = try await GuildhallEndToEndTests.guild(server, owner: alice, members: [bobClient])
        bob = try RawConnection(port: server.port)
        guard bob.loginAndSync(server.token("bob", device: "raw")) != nil else { throw WaitTimeout(what: "bob's raw login") }
    }
}

@Suite struct SendRunTests {
    @Test func sendsWrittenTogetherAreAnsweredAndStoredAsIfEachCameAlone() async throws {
        let server = try TestServer { try $0.set("max-body-bytes", "100") }
        defer { server.stop() }
        let setUp = try await RunSetUp(server)
        let (alice, bob, c) = (setUp.alice, setUp.bob, setUp.channel)
        let g = setUp.guild
        let other = try await alice.channels.create(in: g.serverID, name: "other")
        let locked = try await alice.channels.create(in: g.serverID, name: "locked")
        _ = try await alice.roles.setOverride(in: g.serverID, channel: locked.channelID, user: "bob", GHPermissionBits(deny: [.sendMessages]))

        // What each request is, by id: plain sends to the channel (a run),
        // broken by a refused one, one with a client id, an empty one, one
        // over the size limit, and one to another channel.
        let plan: [(UInt64, UInt64, String?, String)] = [
            (10, c.channelID, "a0", ""), (11, c.channelID, "a1", ""), (12, c.channelID, "a2", ""),
            (13, locked.channelID, "no", ""),
            (14, c.channelID, "a3", ""), (15, c.channelID, "a4", "k1"), (16, c.channelID, nil, ""),
            (17, c.channelID, String(repeating: "x", count: 101), ""), (18, c.channelID, "a5", ""),
            (19, other.channelID, "b0", ""), (20, c.channelID, "a6", ""), (21, c.channelID, "a7", ""),
        ]
        bob.send(plan.flatMap { sendFrame($0.0, to: $0.1, $0.2, clientID: $0.3) })
        let answers = bob.answers(plan.map(\.0))
        #expect(answers.count == plan.count)
        #expect(answers[13]?.error.code == .forbidden)
        #expect(answers[16]?.error.code == .badRequest)
        #expect(answers[17]?.error.code == .tooLarge)
        #expect(stored(answers[19])?.channelID == other.channelID)
        // The channel's messages took seqs in the order they were written.
        let accepted: [UInt64] = [10, 11, 12, 14, 15, 18, 20, 21]
        let sent = accepted.compactMap { stored(answers[$0]) }
        #expect(sent.map(\.body.text) == ["a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7"])
        #expect(sent.map(\.seq) == Array(sent.first!.seq..<sent.first!.seq + 8))
        #expect(sent[4].clientID == "k1")
        #expect(try await alice.messages.history(of: c.channelID).messages.map(\.body.text) == sent.map(\.body.text))
        #expect(try await alice.messages.history(of: locked.channelID).messages.isEmpty)
    }

    /// The sender's other device hears each message of a run as read (the
    /// sender's position at that message, nothing unread): a run's follow-ups
    /// ask once whether a gateway keeps the sender's position, and while one
    /// does, tell it at every message.
    @Test func theSendersOtherDeviceHearsEachMessageOfARunAsRead() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let setUp = try await RunSetUp(server)
        let sent = setUp.bob.sendInOneWrite(40..<50, to: setUp.channel.channelID) { "r\($0)" }
        #expect(sent.count == 10)
        for m in sent {
            _ = try await setUp.bobHears.message { $0.uid == m.uid }
            let unread = setUp.bobHears.messageUnread.withLock { $0[m.uid] }
            #expect(unread?.unreadCount == 0 && unread?.readSeq == m.seq, "seq \(m.seq): \(String(describing: unread))")
        }
    }

    @Test func aTimeoutBetweenTwoRunsRefusesTheWholeSecond() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let setUp = try await RunSetUp(server)
        let (alice, bob, c) = (setUp.alice, setUp.bob, setUp.channel)
        let g = setUp.guild

        bob.send((10..<13).flatMap { sendFrame($0, to: c.channelID, "before \($0)") })
        #expect(bob.answers(10..<13).values.allSatisfy { stored($0) != nil })
        _ = try await alice.members.timeout("bob", in: g.serverID, until: server.clock.now() + 60_000)
        bob.send((20..<23).flatMap { sendFrame($0, to: c.channelID, "during \($0)") })
        let refused = bob.answers(20..<23)
        #expect(refused.count == 3 && refused.values.allSatisfy { $0.error.code == .forbidden })
        _ = try await alice.members.timeout("bob", in: g.serverID, until: 0)
        bob.send((30..<32).flatMap { sendFrame($0, to: c.channelID, "after \($0)") })
        #expect(bob.answers(30..<32).values.compactMap { stored($0) }.count == 2)
        #expect(try await alice.messages.history(of: c.channelID).messages.map(\.body.text)
            == ["before 10", "before 11", "before 12", "after 30", "after 31"])
    }

    /// With a store queue of two, a run is paused after its second send: the
    /// rest wait at the home and go on, before anything read later, once the store drains.
    @Test func runsPausedForTheStoreGoOnInOrder() async throws {
        let server = try TestServer { try $0.set("store-queue-max", "2") }
        defer { server.stop() }
        let setUp = try await RunSetUp(server)
        let (alice, bob, c) = (setUp.alice, setUp.bob, setUp.channel)

        let ids = UInt64(100)..<300
        let sent = bob.sendInOneWrite(ids, to: c.channelID) { "m\($0)" }
        #expect(sent.map(\.body.text) == ids.map { "m\($0)" })
        #expect(sent.map(\.seq) == Array(1...UInt64(ids.count)))
        let newest = try await alice.messages.history(of: c.channelID, limit: 5).messages
        #expect(newest.map(\.body.text) == (295..<300).map { "m\($0)" })
    }

    /// With a tiny `outbound-pause-bytes`, the first send of a run pauses its
    /// publisher: the rest wait at the home and go on, in order, as the fan-out drains.
    @Test func aRunPausedForItsFanOutGoesOnInOrder() async throws {
        let server = try TestServer {
            try $0.set("outbound-pause-bytes", "4096")
            $0.adminListen = "127.0.0.1:0"
            $0.adminToken = "op-secret"
        }
        defer { server.stop() }
        let setUp = try await RunSetUp(server)
        let (bob, c, bobHears) = (setUp.bob, setUp.channel, setUp.bobHears)

        let ids = UInt64(100)..<200
        let text = { (id: UInt64) in "m\(id) " + String(repeating: "x", count: 1500) }
        let sent = bob.sendInOneWrite(ids, to: c.channelID, text)
        #expect(sent.map(\.body.text) == ids.map(text))
        #expect(sent.map(\.seq) == Array(1...UInt64(ids.count)))
        // bob's other device hears every one, in order.
        _ = try await waitFor("bob's other device to hear them all", timeout: 30) { bobHears.messages.count >= ids.count ? true : nil }
        #expect(bobHears.messages.map(\.seq) == Array(1...UInt64(ids.count)))
        // The publisher was paused (and read again) while the run went on.
        let scrape = try HTTPExchange.request("GET", "/metrics", port: server.adminPort, token: "op-secret").body
        #expect(AdminEndpointTests.metric(scrape, "guildhall_publisher_pause_seconds_count") >= 1)
    }
}

extension FailedCommitTests {
    @Test func aRunWhoseCommitsFailIsRefusedSendBySendAndStoresNothing() async throws {
        let server = try fillableServer()
        defer {
            FullDisk.free(server.folder)
            server.stop()
        }
        let setUp = try await RunSetUp(server)
        let (alice, bob, c) = (setUp.alice, setUp.bob, setUp.channel)

        try await fill(server, once: alice, reads: c.channelID)
        bob.send((10..<15).flatMap { sendFrame($0, to: c.channelID, "lost \($0)") })
        let refused = bob.answers(10..<15)
        #expect(refused.count == 5 && refused.values.allSatisfy { $0.error.code == .unavailable })
        FullDisk.free(server.folder)
        try await waitUntil("the store writes again", timeout: 20) {
            (try? await alice.messages.send("back", to: c.channelID)) != nil
        }
        bob.send((20..<23).flatMap { sendFrame($0, to: c.channelID, "kept \($0)") })
        #expect(bob.answers(20..<23).values.compactMap { stored($0) }.count == 3)
        #expect(try await alice.messages.history(of: c.channelID).messages.map(\.body.text) == ["back", "kept 20", "kept 21", "kept 22"])
    }
}
