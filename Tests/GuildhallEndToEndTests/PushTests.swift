// Push (docs/features.md "Push") against a push gateway the test starts
// (PushReceiver): a mention or direct message (a pair's or a group's) to a
// user with no session online is posted, signed, with each registered device (a preview only
// where wanted) and the count since last online; nothing while the user is
// online or DO_NOT_DISTURB, or for a device that unregistered; a gateway
// that fails is tried again; bad registrations are refused.

import Crypto
import Foundation
import GuildhallClient
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite struct PushTests {
    static let secret = "push-test-secret"

    func server(_ receiver: PushReceiver) throws -> TestServer {
        try TestServer {
            $0.pushGatewayURL = receiver.url
            $0.pushSecret = Self.secret
            // A closed connection's session ends at once, so its user is offline at once.
            $0.resumeWindowMs = 0
        }
    }

    /// The notices posted so far, flattened.
    func notices(_ r: PushReceiver) -> [[String: Any]] { r.received.flatMap(\.notices) }

    /// Waits for a notice whose message preview or uid matches.
    func notice(_ r: PushReceiver, uid: UInt64) async throws -> [String: Any] {
        try await waitFor("the notice of \(uid)") { notices(r).first { $0["message_uid"] as? String == "\(uid)" } }
    }

    /// Bob's sessions end: alice, a fellow member of a small server, sees him online first (so an
    /// earlier offline cannot pass for this one), then offline.
    func goOffline(_ clients: [GuildhallClient], _ watcher: Recorder) async throws {
        _ = try await watcher.presence(of: "bob") { $0.status != .presenceOffline }
        for c in clients { c.close() }
        _ = try await watcher.presence(of: "bob") { $0.status == .presenceOffline }
    }

    @Test func aUserWithNoSessionIsPushedSignedPerDeviceWithTheCount() async throws {
        let receiver = try PushReceiver()
        defer { receiver.stop() }
        let server = try server(receiver)
        defer { server.stop() }
        let (alice, aliceHeard) = try await server.client("alice")
        let (phone, _) = try await server.client("bob", device: "phone")
        let (tablet, _) = try await server.client("bob", device: "tablet")
        let (_, c) = try await guild(server, owner: alice, members: [phone])
        try await phone.people.registerPushToken("tok-phone", platform: "fcm")
        try await tablet.people.registerPushToken("tok-tablet", platform: "apns", previews: false)
        await expectError(.badRequest) { try await tablet.people.registerPushToken("", platform: "apns") }
        await expectError(.badRequest) { try await tablet.people.registerPushToken(String(repeating: "t", count: 4097), platform: "apns") }
        try await goOffline([phone, tablet], aliceHeard)

        let dm = try await alice.directs.send("psst, are you there?", to: "bob")
        let first = try await notice(receiver, uid: dm.uid)
        #expect(first["user_id"] as? String == "bob" && first["kind"] as? String == "direct" && first["sender_id"] as? String == "alice")
        #expect(first["unread"] as? Int == 1 && first["channel_id"] as? String == "\(dm.channelID)")
        let devices = try #require(first["devices"] as? [[String: Any]])
        #expect(devices.map { $0["device_id"] as? String } == ["phone", "tablet"])
        #expect(devices.map { $0["token"] as? String } == ["tok-phone", "tok-tablet"] && devices.map { $0["platform"] as? String } == ["fcm", "apns"])
        #expect(devices.map { $0["preview"] as? String } == ["psst, are you there?", ""])

        // Signed: t=<ms>,v1=hex(HMAC-SHA256("<ms>." + body)).
        let post = try #require(receiver.received.first { $0.notices.contains { $0["message_uid"] as? String == "\(dm.uid)" } })
        let signature = try #require(post.headers["x-guildhall-signature"])
        let parts = Dictionary(uniqueKeysWithValues: signature.split(separator: ",").map { p in
            let kv = p.split(separator: "=", maxSplits: 1)
            return (String(kv[0]), String(kv[1]))
        })
        let mac = HMAC<SHA256>.authenticationCode(for: Data("\(parts["t"] ?? "").".utf8) + post.body, using: SymmetricKey(data: Data(Self.secret.utf8)))
        #expect(parts["v1"] == mac.map { String(format: "%02x", $0) }.joined())
        #expect(post.headers["content-type"] == "application/json")

        // A mention counts on.
        let mention = try await alice.messages.send("@bob the deploy is done", to: c.channelID, mentions: ["bob"])
        let second = try await notice(receiver, uid: mention.uid)
        #expect(second["kind"] as? String == "mention" && second["unread"] as? Int == 2 && second["server_id"] as? String != "0")

        // So does a group conversation's message (kept in the inbox as its event, not read back by UID).
        let group = try await alice.directs.createGroup(named: "Deploys", with: ["bob", "carol"])
        let said = try await alice.directs.send("rollback?", inConversation: group.conversationID)
        let third = try await notice(receiver, uid: said.uid)
        #expect(third["kind"] as? String == "direct" && third["unread"] as? Int == 3 && third["channel_id"] as? String == "\(group.conversationID)")
        #expect((third["devices"] as? [[String: Any]])?.first?["preview"] as? String == "rollback?")
    }

    @Test func nothingIsPushedWhileOnlineOrDoNotDisturbOrUnregistered() async throws {
        let receiver = try PushReceiver()
        defer { receiver.stop() }
        let server = try server(receiver)
        defer { server.stop() }
        let (alice, aliceHeard) = try await server.client("alice")
        let (bob, _) = try await server.client("bob", device: "phone")
        _ = try await guild(server, owner: alice, members: [bob])
        try await bob.people.registerPushToken("tok", platform: "fcm")
        let whileOnline = try await alice.directs.send("while online", to: "bob")
        try await bob.people.setPresence(.presenceDoNotDisturb)
        try await goOffline([bob], aliceHeard)
        let whileAway = try await alice.directs.send("do not disturb", to: "bob")
        // Back, not disturbing any more, and gone again: the next message is pushed, counted from 1.
        let (again, _) = try await server.client("bob", device: "phone")
        try await again.people.setPresence(.presenceOnline)
        try await goOffline([again], aliceHeard)
        let after = try await alice.directs.send("after", to: "bob")
        #expect(try await notice(receiver, uid: after.uid)["unread"] as? Int == 1)
        #expect(!notices(receiver).contains { [whileOnline.uid, whileAway.uid].map(String.init).contains($0["message_uid"] as? String ?? "") })
        // Unregistered: nothing for that device; another device's message is the sign the first was passed over.
        let (phone, _) = try await server.client("bob", device: "phone")
        try await phone.people.unregisterPushToken()
        let (watch, _) = try await server.client("bob", device: "watch")
        try await watch.people.registerPushToken("tok-watch", platform: "fcm")
        try await goOffline([phone, watch], aliceHeard)
        let last = try await alice.directs.send("only the watch", to: "bob")
        let devices = try #require(try await notice(receiver, uid: last.uid)["devices"] as? [[String: Any]])
        #expect(devices.map { $0["device_id"] as? String } == ["watch"])
    }

    @Test func aFailingGatewayIsTriedAgain() async throws {
        let receiver = try PushReceiver()
        defer { receiver.stop() }
        receiver.answer(503, 429)
        let server = try server(receiver)
        defer { server.stop() }
        let (alice, aliceHeard) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        _ = try await guild(server, owner: alice, members: [bob])
        try await bob.people.registerPushToken("tok", platform: "fcm")
        try await goOffline([bob], aliceHeard)
        let dm = try await alice.directs.send("eventually", to: "bob")
        _ = try await notice(receiver, uid: dm.uid)
        // Three posts of the same batch: the 503, the 429, and the one taken.
        try await waitUntil("the third post") { receiver.received.filter { $0.notices.contains { $0["message_uid"] as? String == "\(dm.uid)" } }.count == 3 }
        let bodies = Set(receiver.received.map(\.body))
        #expect(bodies.count == 1)
    }

    @Test func pushWithoutASecretIsRefusedAtStart() throws {
        do {
            let server = try TestServer { $0.pushGatewayURL = "http://127.0.0.1:9/push" }
            server.stop()
            Issue.record("a node with push-gateway-url and no push-secret started")
        } catch {
            #expect("\(error)".contains("push-secret"), "\(error)")
        }
    }
}
