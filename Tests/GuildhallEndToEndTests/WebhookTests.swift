// Incoming webhooks (docs/features.md "Webhooks"): made by holders of
// MANAGE_WEBHOOKS (audited), posted to over the web listener's HTTP as any
// message is sent (members hear it live, history keeps it, with the name it
// posted under), refused with a clear status for every bad post, held to a
// rate, gone once deleted, and kept across a restart.

import Foundation
import GuildhallClient
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite struct WebhookTests {
    static func post(_ path: String, port: Int, body: String, type: String = "application/json", method: String = "POST") throws -> HTTPExchange {
        let head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: \(type)\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
        return try HTTPExchange.send(Array((head + body).utf8), port: port)
    }

    @Test func aWebhookPostsIntoItsChannelAndBadPostsAreRefusedClearly() async throws {
        let server = try TestServer {
            $0.wsListen = "127.0.0.1:0"
            $0.rateMessages = 3
            $0.maxBodyBytes = 1000
        }
        defer { server.stop() }
        let port = server.webSocketPort
        let (alice, _) = try await server.client("alice")
        let (bob, bobHeard) = try await server.client("bob")
        let (g, c) = try await guild(server, owner: alice, members: [bob])
        await expectError(.forbidden) { _ = try await bob.webhooks.create(in: c.channelID, name: "sneaky") }
        let hook = try await alice.webhooks.create(in: c.channelID, name: "CI", reason: "build notices")
        #expect(hook.path == "/webhooks/\(c.channelID)/\(hook.webhookID)/\(hook.secret)" && hook.secret.count == 64)
        let listed = try await alice.webhooks.list(in: c.channelID)
        #expect(listed.map(\.webhookID) == [hook.webhookID] && listed[0].secret.isEmpty && listed[0].path.isEmpty && listed[0].name == "CI")

        // A post is a message of the channel: live to members, in history, with its author.
        let ok = try Self.post(hook.path, port: port, body: #"{"content": "build 42 passed", "username": "Builder"}"#)
        #expect(ok.status == 200, "\(ok.body)")
        let heard = try await bobHeard.message { $0.body.text == "build 42 passed" }
        #expect(heard.webhook.name == "Builder" && heard.webhook.webhookID == hook.webhookID && heard.senderID == "webhook:\(hook.webhookID)")
        #expect(ok.json["uid"] as? String == String(heard.uid) && ok.json["seq"] as? Int == Int(heard.seq))
        let plain = try Self.post(hook.path, port: port, body: #"{"content": "deploy started"}"#)
        #expect(plain.status == 200)
        // As curl posts it: past 1 KiB it asks to continue first, and is told to.
        let long = String(repeating: "log line ", count: 100)
        let viaCurl = try Curl.run(["-X", "POST", "-H", "Content-Type: application/json", "--data-binary", #"{"content": "\#(long)"}"#,
                                    "http://127.0.0.1:\(port)\(hook.path)"])
        #expect(viaCurl.status == 200, "\(String(decoding: viaCurl.body, as: UTF8.self))")
        _ = try await bobHeard.message { $0.body.text == long }
        let history = try await bob.messages.history(of: c.channelID).messages
        #expect(history.suffix(3).map(\.webhook.name) == ["Builder", "CI", "CI"])

        // Bad posts, each with a status and a message that names the problem; nothing is sent.
        let before = try await bob.messages.history(of: c.channelID).messages.count
        let wrongSecret = "/webhooks/\(c.channelID)/\(hook.webhookID)/\(String(repeating: "0", count: 64))"
        for (path, body, type, method, status) in [
            (wrongSecret, #"{"content": "x"}"#, "application/json", "POST", 404),
            ("/webhooks/\(c.channelID)/\(hook.webhookID + 1)/\(hook.secret)", #"{"content": "x"}"#, "application/json", "POST", 404),
            ("/webhooks/\(c.channelID + 1)/\(hook.webhookID)/\(hook.secret)", #"{"content": "x"}"#, "application/json", "POST", 404),
            (hook.path, #"{"content": "x"}"#, "application/json", "PUT", 405),
            (hook.path, "content=x", "application/x-www-form-urlencoded", "POST", 415),
            (hook.path, "{not json", "application/json", "POST", 400),
            (hook.path, #"{"content": ""}"#, "application/json", "POST", 400),
            (hook.path, #"{"content": "x", "embeds": []}"#, "application/json", "POST", 400),
            (hook.path, #"{"content": "\#(String(repeating: "x", count: 5000))"}"#, "application/json", "POST", 413),
        ] as [(String, String, String, String, Int)] {
            let answer = try Self.post(path, port: port, body: body, type: type, method: method)
            #expect(answer.status == status && !(answer.json["error"] as? String ?? "").isEmpty, "\(method) \(path) \(body.prefix(40)): \(answer.status) \(answer.body)")
        }
        #expect(try await bob.messages.history(of: c.channelID).messages.count == before)

        // Held to the rate of one session (made 1 a second here, live): a burst past it is told to wait.
        server.update { $0.rateMessages = 1 }
        var statuses: [Int] = []
        for i in 0..<30 where !statuses.contains(429) {
            statuses.append(try Self.post(hook.path, port: port, body: #"{"content": "burst \#(i)"}"#).status)
        }
        #expect(statuses.last == 429 && statuses.dropLast().allSatisfy { $0 == 200 }, "\(statuses)")

        // Kept across a restart; deleted, its URL answers 404; both changes are in the audit log.
        try server.restart()
        let (again, _) = try await server.client("alice", device: "after")
        try await waitUntil("the webhook posts after the restart") {
            try Self.post(hook.path, port: server.webSocketPort, body: #"{"content": "after the restart"}"#).status == 200
        }
        try await again.webhooks.delete(hook.webhookID, in: c.channelID, reason: "retired")
        #expect(try Self.post(hook.path, port: server.webSocketPort, body: #"{"content": "x"}"#).status == 404)
        await expectError(.notFound) { try await again.webhooks.delete(hook.webhookID, in: c.channelID) }
        let log = try await again.servers.auditLog(of: g.serverID)
        #expect(log.entries.prefix(2).map(\.action) == [.auditWebhookDeleted, .auditWebhookCreated])
        #expect(log.entries.first?.reason == "retired" && log.entries.first?.target == String(hook.webhookID))
    }

    @Test func aDeletedChannelTakesItsWebhooksAndTheTenthIsTheLast() async throws {
        let server = try TestServer { $0.wsListen = "127.0.0.1:0" }
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (g, c) = try await guild(server, owner: alice, members: [])
        for i in 0..<10 { _ = try await alice.webhooks.create(in: c.channelID, name: "hook \(i)") }
        await expectError(.limitReached) { _ = try await alice.webhooks.create(in: c.channelID, name: "one too many") }
        await expectError(.badRequest) { _ = try await alice.webhooks.create(in: g.serverID == 0 ? 0 : c.channelID, name: " ") }
        let doomed = try await alice.channels.create(in: g.serverID, name: "doomed")
        let hook = try await alice.webhooks.create(in: doomed.channelID, name: "gone soon")
        try await alice.channels.delete(doomed.channelID)
        #expect(try Self.post(hook.path, port: server.webSocketPort, body: #"{"content": "x"}"#).status == 404)
        try server.restart()
        #expect(try Self.post(hook.path, port: server.webSocketPort, body: #"{"content": "x"}"#).status == 404)
    }
}
