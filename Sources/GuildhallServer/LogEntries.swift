// A cluster log entry's bytes (Proto/log.proto): new messages field by
// field, every other write as the JSON of its StoreWrite. The derived JSON
// of a message was most of a clustered send's cost (2026-11-24: 39% of the
// CPU of `bench store` against one nats-server); messages are nearly all
// of a log. Pure.

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
        let json = JSONEncoder()
        e.writes = try entry.writes.map { w in
            var out = GHLogWrite()
            if case .message(let m) = w, m.changes == MessageChanges() {
                out.message = GHLogMessage(m)
            } else {
                out.other = try json.encode(w)
            }
            return out
        }
        return try e.serializedBytes()
    }

    static func decode(_ bytes: [UInt8]) throws -> LogEntry {
        let e = try GHLogEntry(serializedBytes: bytes)
        let json = JSONDecoder()
        return LogEntry(node: Int(e.node), epoch: e.epoch, writes: try e.writes.map { w in
            switch w.write {
            case .message(let m): return .message(m.record)
            case .other(let data): return try json.decode(StoreWrite.self, from: data)
            case nil: throw StoreError(code: -5, message: "a log write holds nothing")
            }
        })
    }
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
    }

    var record: MessageRecord {
        let body: MessageContent = switch content {
        case .custom(let c): .custom(type: c.type, data: [UInt8](c.data))
        case .text(let t): .text(t)
        case nil: .text("")
        }
        var m = MessageRecord(uid: uid, serverID: serverID, channelID: channelID, seq: seq, sender: sender, sentTime: sentTime,
                              content: body, mentions: mentions, mentionAll: mentionAll, needReceipt: needReceipt, clientID: clientID)
        if hasReply { m.reply = ReplyRef(uid: reply.messageUid, sender: reply.sender, excerpt: reply.excerpt) }
        m.threadRoot = threadRoot
        return m
    }
}
