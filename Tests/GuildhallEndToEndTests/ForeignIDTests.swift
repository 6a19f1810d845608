// docs/reliability.md A4 as a table: for every request kind that names an id, a
// caller who may not see a real server, channel, message or conversation is
// answered exactly as for one that does not exist: same code, same message
// (with the id itself left out of the comparison).

import Foundation
import GuildhallClient
import GuildhallWire
import SwiftProtobuf
import Testing

@Suite struct ForeignIDTests {
    /// The answer as text, with `ids` written as "ID".
    func answer(_ c: GuildhallClient, _ body: GHRequest.OneOf_Body, hiding ids: RequestIDs) async -> String {
        var text: String
        do {
            text = "ok \(try await c.call(body))"
        } catch let e as GuildhallError {
            text = "error \(e.code.rawValue) \(e.message)"
        } catch {
            text = "failed \(error)"
        }
        for id in ids.all {
            text = text.replacingOccurrences(of: String(id), with: "ID")
        }
        return text
    }

    /// "ok", or the error's code and message with `uid` written as "UID".
    func answer(hiding uid: UInt64, _ call: () async throws -> Void) async -> String {
        do {
            try await call()
            return "ok"
        } catch let e as GuildhallError {
            return "\(e.code.rawValue) " + e.message.replacingOccurrences(of: String(uid), with: "UID")
        } catch {
            return "failed \(error)"
        }
    }

    /// The kinds (those `include` names) answered differently for the real ids than for the made-up ones.
    func differing(_ c: GuildhallClient, real: RequestIDs, fake: RequestIDs,
                   include: (String) -> Bool = { _ in true }) async -> [String] {
        var out: [String] = []
        for ((name, hidden), (_, missing)) in zip(real.requests, fake.requests) where include(name) {
            let a = await answer(c, hidden, hiding: real), b = await answer(c, missing, hiding: fake)
            if a != b { out.append("\(name): hidden \(a) | missing \(b)") }
        }
        return out
    }

    @Test func whatACallerMayNotSeeIsAnsweredExactlyAsWhatDoesNotExist() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (carol, _) = try await server.client("carol")
        let (eve, _) = try await server.client("eve")
        let g = try await alice.servers.create(name: "Private", openJoin: false)
        let c = try await alice.channels.create(in: g.serverID, name: "secret")
        let m = try await alice.messages.send("for members only", to: c.channelID, needReceipt: true)
        let dm = try await alice.directs.send("hi carol", to: "carol")
        let group = try await alice.directs.createGroup(named: "trio", with: ["carol", "dan"])
        _ = carol
        let real = RequestIDs(server: g.serverID, channel: c.channelID, message: m.uid, conversation: dm.channelID, directMessage: dm.uid,
                              group: group.conversationID)
        // Made-up ids of the same shapes: a server id (no such server), and UIDs past any issued.
        let fake = RequestIDs(server: g.serverID ^ 0x5A5A, channel: c.channelID + 7_777, message: m.uid + 9_999_999,
                              conversation: dm.channelID + 8_888, directMessage: dm.uid + 9_999_998, group: group.conversationID + 8_888)
        let found = await differing(eve, real: real, fake: fake)
        #expect(found.isEmpty, "\(found.count) kinds differ:\n\(found.joined(separator: "\n"))")
    }

    /// A member who may not view a channel gets the same answers about it as about a channel that does not exist.
    @Test func aChannelAMemberMayNotViewIsAnsweredAsOneThatDoesNotExist() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (eve, _) = try await server.client("eve")
        let g = try await alice.servers.create(name: "Guild")
        _ = try await eve.servers.join(g.serverID)
        let c = try await alice.channels.create(in: g.serverID, name: "staff")
        let m = try await alice.messages.send("staff only", to: c.channelID, needReceipt: true)
        _ = try await alice.roles.setOverride(in: g.serverID, channel: c.channelID, role: 0, GHPermissionBits(deny: [.viewChannel]))
        let other = try await alice.channels.create(in: g.serverID, name: "lobby")
        _ = other
        let real = RequestIDs(server: g.serverID, channel: c.channelID, message: m.uid, conversation: 1, directMessage: 1)
        let fake = RequestIDs(server: g.serverID, channel: c.channelID + 7_777, message: m.uid + 9_999_999, conversation: 1, directMessage: 1)
        let channelKinds: Set = ["updateChannel", "deleteChannel", "sendMessage", "getHistory channel", "getMessages", "setReceivedStatus",
                                 "requestReceipt", "respondReceipts", "getReceiptReaders", "getReceiptInfo", "subscribe channel", "markRead",
                                 "getUnread", "sendTyping", "createInviteCode channel", "pinMessage", "unpinMessage", "listPins"]
        let found = await differing(eve, real: real, fake: fake, include: channelKinds.contains)
        #expect(found.isEmpty, "\(found.count) kinds differ:\n\(found.joined(separator: "\n"))")
    }

    /// Received status is kept only for messages the caller may read; nothing of a refused call is stored.
    @Test func setReceivedStatusRefusesMessagesTheCallerCannotReadOrThatDoNotExist() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (eve, _) = try await server.client("eve")
        let g = try await alice.servers.create(name: "Private", openJoin: false)
        let c = try await alice.channels.create(in: g.serverID, name: "secret")
        let m = try await alice.messages.send("for members only", to: c.channelID)
        let own = try await eve.directs.send("hi alice", to: "alice")
        for uid in [m.uid, m.uid + 9_999_999] {
            do {
                _ = try await eve.messages.setReceivedStatus([own.uid, uid], read: true)
                Issue.record("stored flags on message \(uid)")
            } catch let e as GuildhallError {
                #expect(e.code == .notFound && e.message == "message \(uid) not found")
            }
        }
        #expect(try await eve.messages.receivedStatus([m.uid, own.uid]).map(\.isRead) == [false, false], "nothing of the refused calls was kept")
        #expect(try await eve.messages.setReceivedStatus([own.uid], read: true).map(\.isRead) == [true])
        #expect(try await alice.messages.setReceivedStatus([m.uid], listened: true).map(\.isListened) == [true])
    }

    /// A receipt response naming one's own message with a message of a
    /// channel one may not view (in a private server, or hidden in one's own)
    /// is answered as when the other UID names nothing: the hidden channel's id is not told.
    @Test func aReceiptResponseMixingInAHiddenMessageIsAnsweredAsOneThatDoesNotExist() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (eve, _) = try await server.client("eve")
        let open = try await alice.servers.create(name: "Guild")
        _ = try await eve.servers.join(open.serverID)
        let lobby = try await alice.channels.create(in: open.serverID, name: "lobby")
        let staff = try await alice.channels.create(in: open.serverID, name: "staff")
        _ = try await alice.roles.setOverride(in: open.serverID, channel: staff.channelID, role: 0, GHPermissionBits(deny: [.viewChannel]))
        let closed = try await alice.servers.create(name: "Private", openJoin: false)
        let secret = try await alice.channels.create(in: closed.serverID, name: "secret")
        let own = try await alice.messages.send("for everyone", to: lobby.channelID, needReceipt: true)
        let hidden = try await alice.messages.send("staff only", to: staff.channelID, needReceipt: true)
        let foreign = try await alice.messages.send("members only", to: secret.channelID, needReceipt: true)
        for (uid, made) in [(hidden.uid, hidden.uid + 9_999_999), (foreign.uid, foreign.uid + 9_999_998)] {
            var answers: [String] = []
            for asked in [uid, made] {
                answers.append(await answer(hiding: asked) { _ = try await eve.receipts.respond(channel: lobby.channelID, [own.uid, asked]) })
            }
            #expect(answers[0] == answers[1], "\(answers)")
            #expect(!answers[0].contains(String(staff.channelID)) && !answers[0].contains(String(secret.channelID)))
        }
    }

    /// A thread of one's own conversation whose root is a message one may
    /// not see, or none, is answered as a missing message, every time: with
    /// several loops, the home holding the conversation answers for all.
    @Test func aThreadOfOnesOwnConversationWithAForeignRootIsAnsweredAsAMissingMessage() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (eve, _) = try await server.client("eve")
        let g = try await alice.servers.create(name: "Private", openJoin: false)
        let c = try await alice.channels.create(in: g.serverID, name: "secret")
        let foreign = try await alice.messages.send("members only", to: c.channelID)
        let dm = try await eve.directs.send("hi alice", to: "alice")
        var answers: Set<String> = []
        for round in 0..<20 {
            for root in [foreign.uid, foreign.uid + 9_999_999 + UInt64(round)] {
                answers.insert(await answer(hiding: root) { _ = try await eve.messages.thread(root, in: dm.channelID) })
            }
        }
        #expect(answers == ["\(GHErrorCode.notFound.rawValue) message UID not found"], "\(answers)")
    }

    /// Guest subscriptions to a private server, or to its channel, are answered as for a server that does not exist.
    @Test func guestSubscriptionsToAPrivateServerAreAnsweredAsForOneThatDoesNotExist() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (eve, _) = try await server.client("eve")
        let g = try await alice.servers.create(name: "Private", openJoin: false)
        let c = try await alice.channels.create(in: g.serverID, name: "secret")
        let real = RequestIDs(server: g.serverID, channel: c.channelID, message: 1, conversation: 1, directMessage: 1)
        let fake = RequestIDs(server: g.serverID ^ 0x5A5A, channel: c.channelID + 7_777, message: 1, conversation: 1, directMessage: 1)
        let guestKinds = { (name: String) in name.hasPrefix("subscribe guest") }
        #expect(await differing(eve, real: real, fake: fake, include: guestKinds).isEmpty)
        for (name, request) in real.requests where guestKinds(name) {
            let a = await answer(eve, request, hiding: real)
            #expect(a.contains("targetNotFound") || a.contains("TARGET_NOT_FOUND"), "\(name): \(a)")
        }
    }
}
