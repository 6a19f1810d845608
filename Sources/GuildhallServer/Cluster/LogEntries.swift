// A cluster log entry's bytes (Proto/log.proto): every write field by
// field (LogWrites.swift). Entries that versions before field-numbered
// writes appended hold their non-message writes as JSON (`Write.other`);
// they are still read, never written. Pure.

import Foundation
import GuildhallCore
import GuildhallStore
import GuildhallWire
import SwiftProtobuf

/// What one log entry holds.
struct LogEntry: Equatable {
    /// The node that appended it.
    var node: Int
    /// An owner's first entry: it holds no writes and fences the previous owner.
    var epoch: Bool
    var writes: [StoreWrite]
}

enum LogEntries {
    static func encode(_ entry: LogEntry) throws -> [UInt8] {
        var e = GHLogEntry()
        e.node = UInt32(entry.node)
        e.epoch = entry.epoch
        e.writes = entry.writes.map(GHLogWrite.init)
        return try e.serializedBytes()
    }

    static func decode(_ bytes: [UInt8]) throws -> LogEntry {
        let e = try GHLogEntry(serializedBytes: bytes)
        return LogEntry(node: Int(e.node), epoch: e.epoch, writes: try e.writes.map { try $0.storeWrite() })
    }

    /// A single node's journal records (GuildhallStore's LocalJournal) are entries of this format.
    static let journalCodec = JournalCodec(encode: { try PlainMessageEntries.entry($0) ?? encode(LogEntry(node: 0, epoch: false, writes: $0)) },
                                           decode: { try decode($0).writes })
}

extension GHLogMessage {
    init(_ m: MessageRecord) {
        self.init()
        uid = m.uid
        serverID = m.serverID
        channelID = m.channelID
        seq = m.seq
        sender = m.sender
        sentTime = m.sentTime
        switch m.content {
        case .text(let t): text = t
        case .custom(let type, let data):
            custom.type = type
            custom.data = Data(data)
        }
        mentions = m.mentions
        mentionAll = m.mentionAll
        needReceipt = m.needReceipt
        clientID = m.clientID
        if let r = m.reply {
            reply.messageUid = r.uid
            reply.sender = r.sender
            reply.excerpt = r.excerpt
        }
        threadRoot = m.threadRoot
        if m.changes != MessageChanges() { changes = GHLogChanges(m.changes) }
        attachments = m.attachments.map(GHLogAttachment.init)
        withheld = m.withheld
        if let w = m.webhook { webhook = .with { $0.webhookID = w.webhookID; $0.name = w.name; $0.avatar = w.avatar } }
    }

    func record() throws -> MessageRecord {
        let body: MessageContent = switch content {
        case .custom(let c): .custom(type: c.type, data: [UInt8](c.data))
        case .text(let t): .text(t)
        case nil: .text("")
        }
        var m = MessageRecord(uid: uid, serverID: serverID, channelID: channelID, seq: seq, sender: sender, sentTime: sentTime,
                              content: body, mentions: mentions, mentionAll: mentionAll, needReceipt: needReceipt, clientID: clientID)
        if hasReply { m.reply = ReplyRef(uid: reply.messageUid, sender: reply.sender, excerpt: reply.excerpt) }
        m.threadRoot = threadRoot
        if hasChanges { m.changes = try changes.value() }
        m.attachments = attachments.map(\.value)
        m.withheld = withheld
        if hasWebhook { m.webhook = WebhookAuthor(webhookID: webhook.webhookID, name: webhook.name, avatar: webhook.avatar) }
        return m
    }
}
