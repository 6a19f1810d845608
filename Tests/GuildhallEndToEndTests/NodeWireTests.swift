// Messages between nodes (Proto/node.proto, NodeWire*.swift): a message of
// every kind (each home command, gateway step, session command, interest
// update and mail) comes back from its bytes with nothing lost, and the
// committed ones (Fixtures/node-messages.hex) still read as they did. A
// change that a node one version apart could not read fails here.

import Foundation
import GuildhallCore
import GuildhallLoop
import GuildhallStore
import GuildhallWire
import SwiftProtobuf
import Testing
@testable import GuildhallServer

@Suite struct NodeWireTests {
    static let payload = SharedBytes([0x1a, 0x03, 0x08, 0x01, 0x10])
    static var channel: ChannelRecord {
        var c = ChannelRecord(id: 12, serverID: 11, name: "c", topic: "t", custom: "", createdAt: 4, guestVisibility: .visible)
        c.lastSeq = 9
        c.lastMessageTime = 99
        c.removed = RemovedSeqs([3])
        return c
    }
    static let state = PositionState(position: ReadPosition(readSeq: 2, ackTime: 3, activity: 4), mentions: [MentionMark(seq: 5, time: 6)])

    static var commands: [HomeCommand] {
        var send = SendRequest()
        send.channelID = 12
        send.content = .custom(type: "poll", data: [1, 2])
        send.mentions = ["bob"]
        send.mentionAll = true
        send.needReceipt = true
        send.clientID = "c-1"
        send.replyTo = 7
        send.threadRoot = 8
        send.references = References(reply: ReplyRef(uid: 7, sender: "bob", excerpt: "hi"), threadRoot: 8)
        send.uid = 9 << 22
        send.retried = true
        var plain = SendRequest()
        plain.channelID = 12
        plain.content = .text("hello")
        let typing = GHRequest.OneOf_Body.sendTyping(.with { $0.channelID = 12 })
        return [
            .admit(Admission(key: 1, token: AccessToken(user: "alice", device: "phone", expiry: 1_800_000_000), autoSubscribe: true, id: 2,
                             resumeFailure: "gone", missed: MissedMessages(ranges: [.init(server: 11, channel: 12, first: 3, last: 5)]),
                             peer: "127.0.0.1:5", gatewayLife: 1_790_000_000_123)),
            .opened(OpenedSession(key: 3, user: "alice", device: "phone", sessionID: "s-1", autoSubscribe: false, gatewayLife: 1_790_000_000_456)),
            .route(typing, id: 4, key: 5, part: true),
            .send(send, id: 6, key: 7),
            .send(plain, id: 8, key: 9),
            .check(.subscribe(.with { $0.type = .channelMsg; $0.targets = [.with { $0.serverID = 11; $0.channelID = 12 }] }), gather: 10, key: 11),
            .tails([12, 13], user: "alice", gather: 12, key: 13),
            .grant(typing, gather: 14, key: 15),
            .release("alice", kind: 1, [SubscriptionTarget(server: 11, channel: 12)]),
            .acknowledged(key: 16, ackedOrd: 17, packageAcked: true),
            .ended(18, ackedOrd: 19, reconnecting: false),
            .received(20, [12: 21]),
            .detached(22, since: 23),
            .resumed(24),
            .behind(25, true),
            .replay(12, after: 26, before: 27),
            .outbound(queued: 28, applied: 29),
        ]
    }

    static var steps: [GatewayStep] {
        let orders: [SessionCommand] = [
            .send(payload, ord: 1), .respond([1, 2, 3]), .part(2, GatherPart(result: .ok(GHOk()), fromHolder: true)),
            .typing(.with { $0.serverID = 11; $0.channelID = 12 }), .admitted(user: "alice", device: "phone", sessionID: "s-1"),
            .syncedFrom(3), .noteInboxItem(4), .packageSent, .finishSync, .pause([.outbound]), .resume([.storage, .credit]),
            .end(.slowConsumer, "behind"), .end(nil, ""),
        ]
        return orders.map { .command(SessionOrder(key: 40, command: $0)) } + [
            .event(payload, [EventRecipient(key: 1, unread: .init(unreadCount: 2, mentionedCount: 1, ackTimestamp: 3, readSeq: 4), cursor: 5),
                             EventRecipient(key: 2, unread: nil, cursor: 0)]),
            .place(12, 11), .place(13, nil),
            .interest(.holds(key: 1, user: "bob", channel: 12, state: state)),
            .interest(.holds(key: 1, user: "bob", channel: 12, state: nil)),
            .interest(.member(key: 1, user: "bob", server: 11, states: [12: state])),
            .interest(.member(key: 1, user: "bob", server: 11, states: nil)),
            .interest(.position(user: "bob", channel: 12, server: 11, state)),
            .channelEvent(ChannelEvent(payload: payload, channel: channel.tip, except: 7, toMembers: true, cursors: ["bob": 3],
                                       hiddenFrom: ["eve"], seq: 9, replayed: true)),
            .replayed(12, upTo: 9),
        ]
    }

    static var mail: [HomeMail] {
        let message = MessageRecord(uid: 7 << 22, serverID: 11, channelID: 12, seq: 3, sender: "alice", sentTime: 5, content: .text("hi"),
                                    mentions: ["bob"], mentionAll: false, needReceipt: false, clientID: "")
        return [
            .file([MailedItem(user: "bob", stored: .event([1, 2]), live: .push(payload)),
                   MailedItem(user: "bob", stored: .message(7 << 22), live: .pushExceptOrigin(payload, origin: 4)),
                   MailedItem(user: "carol", stored: .message(8 << 22), live: .noted)], token: 1),
            .filed(token: 2),
            .dress(user: "bob", items: [InboxItem(ord: 1, message: message, event: []), InboxItem(ord: 2, message: nil, event: [9])], token: 3),
            .dressed(token: 4, events: [GHEvent.with { $0.seq = 1; $0.message.uid = 7 << 22 }, nil]),
            .autoChannels(user: "bob", [AutoChannel(id: 12, activity: 5)]),
            .autoTouch(user: "bob", channel: 12, activity: 6),
            .autoLevels(user: "bob", [12: .messages], uncovered: 1),
            .autoLevels(user: "bob", [13: ChannelLevel?.none], uncovered: 0),
            .subscriptionTallies([TallyChange(user: "bob", kind: .channelMessages, target: SubscriptionTarget(server: 11, channel: 12), holds: true)]),
            .receivedRange(user: "bob", .with { $0.channelID = 12; $0.seq = 3; $0.sentUntil = 4; $0.isRead = true }, except: 5),
        ]
    }

    /// Every message of the samples, each in its own envelope (loop 1 of node 2 to loop 0).
    /// Samples of fields added since the fixture was first written (after the others, so their places stay).
    static var addedLater: [LoopMessage] {
        var withFiles = SendRequest()
        withFiles.channelID = 12
        withFiles.content = .text("")
        withFiles.attachmentIDs = [31, 32]
        let files = [FileAttachment(fileID: 31, filename: "a.png", contentType: "image/png", size: 9, width: 2, height: 3, sha256: "ab")]
        return [
            .fromGateway(1, [.send(withFiles, id: 30, key: 31)]),
            .fromHome(1, [.channelEvent(ChannelEvent(payload: payload, channel: channel.tip, except: 0, toMembers: false, cursors: [:], seq: 0,
                                                     files: files, filesInUpdate: true))]),
            .mail(1, [.presence([.with { $0.userID = "bob"; $0.status = .presenceIdle; $0.customText = "lunch" },
                                 .with { $0.userID = "carol"; $0.status = .presenceOffline; $0.lastSeen = 33 }])]),
            .mail(1, [.presenceAsked(users: ["bob", "carol"], session: 34)]),
            .fromHome(1, [.command(SessionOrder(key: 40, command: .presence([.with { $0.userID = "bob"; $0.status = .presenceDoNotDisturb }])))]),
            .mail(1, [.profiles([UserProfile(user: "bob", displayName: "Bob ✓", avatar: "https://example.com/b.png", updatedAt: 41)], changed: true)]),
            .mail(1, [.profilesAsked(users: ["bob", "carol"])]),
            .mail(1, [.directCheck(token: 42, from: "eve", to: ["bob", "carol"])]),
            .mail(1, [.directChecked(token: 42, [DirectVerdict(user: "bob", home: true, serverMatesOnly: true, sharesAServer: false),
                                                  DirectVerdict(user: "carol", home: false, serverMatesOnly: false, sharesAServer: true)])]),
            .mail(1, [.directPrivacyChanged("bob")]),
            .fromGateway(1, [.webhookPost(WebhookDelivery(channelID: 12, webhookID: 43, secret: "s3cret",
                                                          post: WebhookPost(content: "build passed", username: "CI ✓", avatar: nil), token: 44))]),
            .fromHome(1, [.webhookAnswered(token: 44, status: 200, body: #"{"seq":1}"#)]),
            .mail(1, [.file([MailedItem(user: "bob", stored: .event([1, 2]), live: .push(payload), owesPush: true)], token: 45)]),
            .fromGateway(1, [.ended(46, ackedOrd: 47, reconnecting: true)]),
        ]
    }

    static var envelopes: [GHNodeEnvelope] {
        let messages: [LoopMessage] = commands.map { .fromGateway(1, [$0]) } + steps.map { .fromHome(1, [$0]) } + mail.map { .mail(1, [$0]) }
            + addedLater
        return messages.map { NodeWire.envelope($0, toLoop: 0, fromNode: 2)! }
    }

    static func bytes(_ e: GHNodeEnvelope) throws -> [UInt8] {
        var options = BinaryEncodingOptions()
        options.useDeterministicOrdering = true
        return try e.serializedBytes(options: options)
    }

    @Test func everyKindIsInTheSamples() {
        var kinds = Set<String>()
        for c in Self.commands { kinds.insert("command." + String(describing: c).prefix { $0 != "(" }) }
        for s in Self.steps {
            switch s {
            case .command(let o): kinds.insert("session." + String(describing: o.command).prefix { $0 != "(" })
            case .interest(let i): kinds.insert("interest." + String(describing: i).prefix { $0 != "(" })
            default: kinds.insert("step." + String(describing: s).prefix { $0 != "(" })
            }
        }
        for m in Self.mail { kinds.insert("mail." + String(describing: m).prefix { $0 != "(" }) }
        // 16 home commands, 4 steps besides commands and interest, 12 session commands, 3 interest updates, 9 mail kinds.
        #expect(kinds.count == 16 + 4 + 12 + 3 + 9, "\(kinds.sorted())")
    }

    /// Decoded and encoded again, every sample gives the same bytes: no field is lost on the way.
    @Test func everyKindComesBackFromItsBytes() throws {
        for e in Self.envelopes {
            let bytes = try Self.bytes(e)
            let message = try NodeWire.loopMessage(try GHNodeEnvelope(serializedBytes: bytes))
            #expect(message.sender == Place.remote(node: 2, loop: 1), "the sender's place")
            let again = NodeWire.envelope(message.withSender(1), toLoop: 0, fromNode: 2)!
            #expect(try Self.bytes(again) == bytes, "\(e)")
        }
    }

    /// The committed messages still read, to what they were. `GUILDHALL_WRITE_FIXTURES=1` writes the file anew.
    @Test func committedMessagesOfEveryKindStillRead() throws {
        let written = try Self.envelopes.enumerated().map { ($0.offset, try Self.bytes($0.element)) }
        if ProcessInfo.processInfo.environment["GUILDHALL_WRITE_FIXTURES"] == "1" {
            try LogEntriesTests.hexLines(written).write(to: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("Fixtures/node-messages.hex"), atomically: true, encoding: .utf8)
        }
        let committed = try LogEntriesTests.fixture("node-messages.hex")
        #expect(committed.count == written.count, "a sample without its committed message: GUILDHALL_WRITE_FIXTURES=1 adds it")
        for (i, bytes) in committed {
            let message = try NodeWire.loopMessage(try GHNodeEnvelope(serializedBytes: bytes))
            #expect(try Self.bytes(NodeWire.envelope(message.withSender(1), toLoop: 0, fromNode: 2)!) == bytes, "sample \(i) reads differently")
            #expect(written[i].1 == bytes, "sample \(i) is written differently than committed")
        }
    }

    /// Channel events as nodes wrote them before they carried only the channel's
    /// tip (the whole channel, name and topic too; Fixtures/node-messages-whole-channel.hex,
    /// by their sample's number) still read, to what today's writer writes of them.
    @Test func channelEventsWithTheWholeChannelStillRead() throws {
        let older = try LogEntriesTests.fixture("node-messages-whole-channel.hex")
        let committed = Dictionary(uniqueKeysWithValues: try LogEntriesTests.fixture("node-messages.hex"))
        #expect(!older.isEmpty)
        for (i, bytes) in older {
            let message = try NodeWire.loopMessage(try GHNodeEnvelope(serializedBytes: bytes))
            guard case .fromHome(_, let steps) = message, case .channelEvent(let e) = steps.first else {
                Issue.record("sample \(i) is not a channel event")
                continue
            }
            #expect(e.channel == Self.channel.tip, "sample \(i)")
            #expect(try Self.bytes(NodeWire.envelope(message.withSender(1), toLoop: 0, fromNode: 2)!) == committed[i], "sample \(i)")
        }
    }

    @Test func unreadableBytesAreRefused() {
        #expect(throws: (any Error).self) { _ = try NodeWire.loopMessage(try GHNodeEnvelope(serializedBytes: [0xff, 0xff, 0xff])) }
        #expect(throws: NodeWireError.self) { _ = try NodeWire.loopMessage(GHNodeEnvelope()) }
        #expect(throws: NodeWireError.self) { _ = try NodeWire.loopMessage(.with { $0.fromGateway.commands = [GHNodeHomeCommand()] }) }
    }
}

extension LoopMessage {
    /// The place a node message came from.
    var sender: Int {
        switch self {
        case .fromGateway(let from, _), .fromHome(let from, _), .mail(let from, _): from
        default: -1
        }
    }

    /// The same message as loop `loop` of this node would send it.
    func withSender(_ loop: Int) -> LoopMessage {
        switch self {
        case .fromGateway(_, let c): .fromGateway(loop, c)
        case .fromHome(_, let s): .fromHome(loop, s)
        case .mail(_, let m): .mail(loop, m)
        default: self
        }
    }
}
