// Cluster log entries (Proto/log.proto, LogEntries.swift, LogWrites.swift):
// every kind of write comes back from its bytes exactly as it went in, and
// committed entries (Fixtures/) still read as they did: those of this format,
// and the JSON ones versions before it appended. A change that would make an
// existing log unreadable, or that an older node could not read, fails here.

import GuildhallCore
import Foundation
import GuildhallStore
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite struct LogEntriesTests {
    static var message: MessageRecord {
        var m = MessageRecord(uid: 7 << 22, serverID: 11, channelID: 12, seq: 3, sender: "alice", sentTime: 1_700_000_000_000,
                              content: .text("hi ✓"), mentions: ["bob"], mentionAll: true, needReceipt: true, clientID: "c-1")
        m.reply = ReplyRef(uid: 5 << 22, sender: "bob", excerpt: "earlier")
        m.threadRoot = 4 << 22
        return m
    }

    /// One write of every kind (the switch below fails to compile when a kind is added and not listed here).
    static var everyKind: [StoreWrite] {
        var edited = message
        edited.changes.editCount = 1
        var custom = message
        custom.content = .custom(type: "poll", data: [0, 1, 255])
        custom.reply = nil
        var side = DirectConversation.Side(user: "bob")
        side.deliveredSeq = 4
        var readSingly = side
        readSingly.readSingly = [9 << 22: 30]
        var removed = message
        removed.changes.removal = Removal(kind: .deleted, by: "carol", time: 40)
        removed.changes.reactions = [ReactionCount(type: 2, count: 3, mine: false)]
        var carrying = message
        carrying.attachments = [FileAttachment(fileID: 24, filename: "plan v2.pdf", contentType: "application/pdf", size: 25, sha256: String(repeating: "ab", count: 32)),
                                FileAttachment(fileID: 29, filename: "map.png", contentType: "image/png", size: 30, width: 640, height: 480, sha256: String(repeating: "cd", count: 32))]
        var channel = ChannelRecord(id: 13, serverID: 11, name: "d", topic: "", custom: "x", createdAt: 4, guestVisibility: .invisible)
        channel.removed = RemovedSeqs([2, 5])
        return [
            .message(message), .message(custom), .message(edited),
            .directory(.serverSaved(ServerRecord(id: 11, name: "g", icon: "", custom: "{}", owner: "alice", openJoin: true, createdAt: 1))),
            .directory(.serverDeleted(11)),
            .directory(.memberSaved(MemberRecord(serverID: 11, userID: "bob", role: .member, joinedAt: 2, roles: [3]))),
            .directory(.memberRemoved(11, "bob")),
            .directory(.inviteSaved(InviteRecord(serverID: 11, userID: "carol", inviter: "alice", createdAt: 3))),
            .directory(.inviteRemoved(11, "carol")),
            .directory(.channelSaved(ChannelRecord(id: 12, serverID: 11, name: "c", topic: "t", custom: "", createdAt: 4))),
            .directory(.channelDeleted(12)),
            .directory(.banSaved(BanRecord(serverID: 11, userID: "eve", actor: "alice", createdAt: 5))),
            .directory(.banRemoved(11, "eve")),
            .directory(.roleSaved(RoleRecord(serverID: 11, id: 3, name: "mod", position: 2,
                                             permissions: PermissionOverride(allow: [.sendMessages], deny: []), createdAt: 6))),
            .directory(.roleDeleted(11, 3)),
            .directory(.overrideSaved(OverrideRecord(serverID: 11, channelID: 12, target: .member("bob"),
                                                     permissions: PermissionOverride(allow: [], deny: [.sendMessages])))),
            .readPosition("bob", 12, ReadPosition(readSeq: 2, ackTime: 7, activity: 8)),
            .inbox(InboxRow(ord: 9, user: "bob", at: 10, messageUID: 7 << 22)),
            .inbox(InboxRow(ord: 10, user: "bob", at: 11, event: [1, 2, 3])),
            .syncCursor("bob", "phone", 9),
            .receivedStatus("bob", 7 << 22, [.retrieved]),
            .pruneInbox(before: 12),
            .receiptRequest(12, ChannelReceipts.Request(uid: 7 << 22, seq: 3, requester: "alice", sentTime: 13)),
            .receiptAdvance(12, ChannelReceipts.Advance(user: "bob", from: 1, to: 3, time: 14)),
            .conversation(id: 15, users: ["alice", "bob"], createdAt: 16),
            .directSide(conversation: 15, side),
            .directRead(conversation: 15, reader: "bob", uid: 8 << 22, sentTime: 17),
            .receivedSeq("bob", 12, 3),
            .messageEdited(7 << 22, .text("edited"), time: 18, channel: 12),
            .messageRemoved(7 << 22, Removal(kind: .recalled, by: "alice", time: 19), channel: 12),
            .threadReply(root: 4 << 22, time: 20, channel: 12),
            .reaction(7 << 22, user: "bob", type: 1, added: true, time: 21, channel: 12),
            .logPosition(shard: 3, seq: 22),
            // Added with field-numbered writes (the fixture of older JSON entries has none of these).
            .message(removed),
            .directory(.channelSaved(channel)),
            .directory(.overrideSaved(OverrideRecord(serverID: 11, channelID: 12, target: .role(3),
                                                     permissions: PermissionOverride(allow: [.sendMessages], deny: [.kick])))),
            .messageEdited(7 << 22, .custom(type: "poll", data: [9]), time: 23, channel: 12),
            .directSide(conversation: 16, readSingly),
            .fileCreated(FileRecord(id: 24, uploader: "bob", serverID: 11, channelID: 12, filename: "plan v2.pdf", contentType: "application/pdf",
                                    size: 25, sha256: String(repeating: "ab", count: 32), createdAt: 26)),
            .directory(.serverSaved(ServerRecord(id: 27, name: "listed", icon: "", custom: "", owner: "alice", openJoin: true, createdAt: 28,
                                                 allowGuests: true, discoverable: true))),
            .message(carrying),
            .fileSwept(24, serverID: 11, channelID: 12),
            .fileSwept(31, serverID: 0, channelID: 15),
            .presence("bob", PresenceChoice(status: .doNotDisturb, text: "in a meeting"), lastSeen: 32),
            .directory(.inviteCodeSaved(InviteCode(code: "Ab3dEf7h", serverID: 11, channelID: 12, creator: "alice", createdAt: 33, expiresAt: 34,
                                                   maxUses: 5, uses: 1))),
            .directory(.inviteCodeRemoved(11, "Ab3dEf7h")),
            .directory(.timeoutSaved(TimeoutRecord(serverID: 11, userID: "bob", until: 35, actor: "alice"))),
            .directory(.timeoutRemoved(11, "bob")),
            .directory(.banSaved(BanRecord(serverID: 11, userID: "eve", actor: "alice", createdAt: 36, expiresAt: 37))),
            .directory(.channelSaved(ChannelRecord(id: 38, serverID: 11, name: "slow", topic: "", custom: "", createdAt: 39, slowModeSeconds: 40))),
            .pinned(PinRecord(channelID: 12, messageUID: 7 << 22, pinnedBy: "alice", pinnedAt: 41)),
            .unpinned(12, 7 << 22),
            .audited(AuditEntry(id: 42 << 22, serverID: 11, actor: "alice", action: .channelUpdated, target: "12", channelID: 12,
                                changes: [AuditChange(key: "name", before: "\"general\"", after: "\"lobby\"")], reason: "tidy ✓", time: 43)),
            .audited(AuditEntry(id: 44 << 22, serverID: 11, actor: "", action: .memberUnbanned, target: "eve", time: 45)),
            .pruneAuditLog(before: 46),
            .profile(UserProfile(user: "bob", displayName: "Bob ✓", avatar: "https://example.com/b.png", updatedAt: 47)),
            .directory(.memberSaved({
                var m = MemberRecord(serverID: 11, userID: "bob", role: .member, joinedAt: 48, roles: [3])
                (m.nickname, m.displayName, m.avatar) = ("bobby", "Bob ✓", "file:49")
                return m
            }())),
            .pushRegistered(PushRegistration(user: "bob", device: "phone", platform: "fcm", token: "tok-50", previews: false, updatedAt: 51)),
            .pushUnregistered("bob", "phone"),
            .directBlock(blocker: "bob", blocked: "eve", blocks: true),
            .message({
                var m = MessageRecord(uid: 52 << 22, serverID: 0, channelID: 15, seq: 9, sender: "eve", sentTime: 53, content: .text("hello?"),
                                      mentions: [], mentionAll: false, needReceipt: false, clientID: "")
                m.withheld = true
                return m
            }()),
            .group(GroupRow(id: 54 << 22, name: "trio ✓", owner: "bob", membersMayAdd: true, members: ["ann", "bob", "eve"], createdAt: 55)),
            .directPrivacy("bob", serverMatesOnly: true),
            .webhookSaved(WebhookRecord(id: 56 << 22, serverID: 11, channelID: 12, name: "CI ✓", secretHash: String(repeating: "ab", count: 32),
                                        createdBy: "alice", createdAt: 57)),
            .webhookDeleted(id: 56 << 22, serverID: 11),
            .message({
                var m = MessageRecord(uid: 58 << 22, serverID: 11, channelID: 12, seq: 10, sender: "webhook:\(56 << 22)", sentTime: 59,
                                      content: .text("build passed"), mentions: [], mentionAll: false, needReceipt: false, clientID: "")
                m.webhook = WebhookAuthor(webhookID: 56 << 22, name: "CI bot", avatar: "https://example.com/ci.png")
                return m
            }()),
        ]
    }

    @Test func everyKindOfWriteComesBackFromItsBytes() throws {
        var kinds = Set<String>()
        for w in Self.everyKind {
            switch w {
            case .directory: kinds.insert("directory")
            case .message: kinds.insert("message")
            case .readPosition: kinds.insert("readPosition")
            case .inbox: kinds.insert("inbox")
            case .syncCursor: kinds.insert("syncCursor")
            case .receivedStatus: kinds.insert("receivedStatus")
            case .pruneInbox: kinds.insert("pruneInbox")
            case .receiptRequest: kinds.insert("receiptRequest")
            case .receiptAdvance: kinds.insert("receiptAdvance")
            case .conversation: kinds.insert("conversation")
            case .directSide: kinds.insert("directSide")
            case .directRead: kinds.insert("directRead")
            case .receivedSeq: kinds.insert("receivedSeq")
            case .messageEdited: kinds.insert("messageEdited")
            case .messageRemoved: kinds.insert("messageRemoved")
            case .threadReply: kinds.insert("threadReply")
            case .reaction: kinds.insert("reaction")
            case .logPosition: kinds.insert("logPosition")
            case .fileCreated: kinds.insert("fileCreated")
            case .fileSwept: kinds.insert("fileSwept")
            case .presence: kinds.insert("presence")
            case .pinned: kinds.insert("pinned")
            case .unpinned: kinds.insert("unpinned")
            case .audited: kinds.insert("audited")
            case .pruneAuditLog: kinds.insert("pruneAuditLog")
            case .profile: kinds.insert("profile")
            case .pushRegistered: kinds.insert("pushRegistered")
            case .pushUnregistered: kinds.insert("pushUnregistered")
            case .directBlock: kinds.insert("directBlock")
            case .group: kinds.insert("group")
            case .directPrivacy: kinds.insert("directPrivacy")
            case .webhookSaved: kinds.insert("webhookSaved")
            case .webhookDeleted: kinds.insert("webhookDeleted")
            }
        }
        #expect(kinds.count == 33, "every kind is in the sample")
        let entry = LogEntry(node: 3, epoch: false, writes: Self.everyKind)
        let back = try LogEntries.decode(try LogEntries.encode(entry))
        #expect(back == entry)
        for (a, b) in zip(back.writes, entry.writes) { #expect(a == b) }
    }

    @Test func aNewMessageTravelsFieldByFieldAndSmallerThanItsJSON() throws {
        let bytes = try LogEntries.encode(LogEntry(node: 1, epoch: false, writes: [.message(Self.message)]))
        let entry = try GHLogEntry(serializedBytes: bytes)
        guard case .message(let m)? = entry.writes.first?.write else {
            Issue.record("a new message is not written field by field")
            return
        }
        #expect(try m.record() == Self.message)
        let json = try JSONEncoder().encode(StoreWrite.message(Self.message))
        #expect(bytes.count < json.count / 2, "\(bytes.count) bytes, against \(json.count) as JSON")
    }

    /// The journal's hand-written entries of plain messages are the generated
    /// encoder's bytes, for every field a plain message may hold (empty and
    /// long texts, custom content, empty mentions, a thread root, withheld).
    @Test func plainMessageEntriesAreTheGeneratedEncodersBytes() throws {
        var text = Self.message
        text.reply = nil; text.attachments = []; text.webhook = nil; text.changes = MessageChanges()
        var variants = [text]
        for change in [{ (m: inout MessageRecord) in m.content = .text("") },
                       { $0.content = .text(String(repeating: "é", count: 300)); $0.mentions = ["", "bob"] },
                       { $0.content = .custom(type: "", data: []); $0.clientID = ""; $0.sender = "" },
                       { $0.content = .custom(type: "poll", data: Array(repeating: 7, count: 200)); $0.threadRoot = 9; $0.withheld = true },
                       { $0.uid = 0; $0.serverID = 0; $0.seq = UInt64.max; $0.mentionAll = true; $0.needReceipt = true; $0.mentions = [] }] {
            var m = text
            change(&m)
            variants.append(m)
        }
        for writes in variants.map({ [StoreWrite.message($0)] }) + [variants.map { .message($0) }] {
            let generated = try LogEntries.encode(LogEntry(node: 0, epoch: false, writes: writes))
            #expect(PlainMessageEntries.entry(writes) == generated)
            #expect(try LogEntries.journalCodec.decode(generated) == writes)
        }
        // Anything else is left to the generated encoder.
        #expect(PlainMessageEntries.entry([.message(text), .message(Self.message)]) == nil, "a reply")
        #expect(PlainMessageEntries.entry(Self.everyKind) == nil)
    }

    @Test func anEpochMarkerHoldsNoWrites() throws {
        let back = try LogEntries.decode(try LogEntries.encode(LogEntry(node: 2, epoch: true, writes: [])))
        #expect(back == LogEntry(node: 2, epoch: true, writes: []))
        #expect(throws: (any Error).self) { _ = try LogEntries.decode([0xff, 0xff, 0xff]) }
    }

    /// Committed entries, one per line: `<sample index> <hex of the entry's bytes>`.
    static func fixture(_ name: String) throws -> [(Int, [UInt8])] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/\(name)")
        return try String(contentsOf: url, encoding: .utf8).split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 2, let index = Int(parts[0]) else { return nil }
            let hex = Array(parts[1].utf8)
            let bytes = stride(from: 0, to: hex.count - 1, by: 2).map { UInt8(String(decoding: hex[$0...$0 + 1], as: UTF8.self), radix: 16)! }
            return (index, bytes)
        }
    }

    static func hexLines(_ entries: [(Int, [UInt8])]) -> String {
        entries.map { "\($0.0) " + $0.1.map { String(format: "%02x", $0) }.joined() }.joined(separator: "\n") + "\n"
    }

    /// Every kind's entry as committed decodes to its sample, and today's
    /// writer still writes exactly those bytes. `GUILDHALL_WRITE_FIXTURES=1`
    /// writes the file anew, for a change that only adds fields.
    @Test func committedEntriesOfEveryKindStillRead() throws {
        let samples = Self.everyKind
        let written = try samples.indices.map { i in (i, try LogEntries.encode(LogEntry(node: 3, epoch: false, writes: [samples[i]]))) }
        if ProcessInfo.processInfo.environment["GUILDHALL_WRITE_FIXTURES"] == "1" {
            try Self.hexLines(written).write(to: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("Fixtures/log-entries.hex"), atomically: true, encoding: .utf8)
        }
        let committed = try Self.fixture("log-entries.hex")
        #expect(committed.count == samples.count, "a sample without its committed entry: GUILDHALL_WRITE_FIXTURES=1 adds it")
        for (i, bytes) in committed {
            #expect(try LogEntries.decode(bytes) == LogEntry(node: 3, epoch: false, writes: [samples[i]]), "sample \(i)")
            #expect(written[i].1 == bytes, "sample \(i) is written differently than committed")
            #expect(try GHLogEntry(serializedBytes: bytes).writes.allSatisfy { $0.other.isEmpty }, "sample \(i) as JSON")
        }
    }

    /// What versions before field-numbered writes appended (non-message writes as JSON) still replays.
    @Test func entriesWithJSONWritesFromOlderVersionsStillRead() throws {
        let committed = try Self.fixture("log-entries-json.hex")
        #expect(committed.count == 33)
        var json = 0
        for (i, bytes) in committed {
            #expect(try LogEntries.decode(bytes) == LogEntry(node: 3, epoch: false, writes: [Self.everyKind[i]]), "sample \(i)")
            if try GHLogEntry(serializedBytes: bytes).writes.contains(where: { !$0.other.isEmpty }) { json += 1 }
        }
        #expect(json == 31, "the older entries hold JSON writes")
    }
}
