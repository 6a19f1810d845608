// How a MessageRecord maps onto a row of `messages`, both ways.
// Mentions are newline-joined: user ids cannot hold control characters.
// Attachments and a webhook author are their JSON ('' for none).

import Foundation
import GuildhallCore

enum MessageRows {
    static let columns = "uid, server_id, channel_id, seq, sender, sent_time, kind, text, custom_type, payload, mentions, mention_all, need_receipt, client_id"

    /// Parameters of one row of a plain insert (`columns`).
    static let plainParameters = 14
    /// Row counts of the plain inserts, largest first (WriterStatements): a run
    /// of plain messages goes in the largest that fit, then the smaller ones.
    static let rowsPerInsert = [16, 8, 4, 2, 1]
    /// The plain insert of `rows` rows in one statement.
    static func insertSQL(rows: Int) -> String {
        "INSERT INTO messages(\(columns)) VALUES" + Array(repeating: "(?,?,?,?,?,?,?,?,?,?,?,?,?,?)", count: rows).joined(separator: ",")
    }
    /// A reply, a thread's message or one with files: the plain columns plus
    /// its references and attachments (kept apart so plain sends bind no more).
    static let insertFullSQL =
        "INSERT INTO messages(\(columns), reply_to, reply_sender, reply_excerpt, thread_root, attachments, withheld, webhook) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
    /// What reads select: the columns above, then what happened to the message since.
    static let readColumns = columns + ", reply_to, reply_sender, reply_excerpt, thread_root, thread_replies, thread_last, "
        + "edited_time, edit_count, removed, removed_by, removed_time, attachments, withheld, webhook"
    /// How many columns `readColumns` names (a query may select more after them).
    static let readColumnCount = 28

    /// Whether `m` needs `insertFullSQL`.
    /// Whether a new message has words for the search index: its text, or its
    /// files' names (custom content has none the server can read). One without
    /// is not queued for the index at all.
    static func hasWords(_ m: MessageRecord) -> Bool {
        if case .text(let text) = m.content, !text.isEmpty { return true }
        return !m.attachments.isEmpty
    }

    static func needsFullInsert(_ m: MessageRecord) -> Bool {
        m.reply != nil || m.threadRoot != 0 || !m.attachments.isEmpty || m.withheld || m.webhook != nil
    }

    /// Binds `m` as row `row` of an insert (a multi-row plain insert's rows
    /// after the first; a full insert has one). Its texts and bytes are
    /// bound in place in `arena` (BindArena.swift): reset it once the statement ran.
    static func bind(_ m: MessageRecord, to s: Statement, row: Int = 0, arena: BindArena) {
        func text(_ i: Int32, _ value: String) { s.bind(i, value, in: arena) }
        let o = Int32(row * plainParameters)
        s.bind(o + 1, m.uid)
        s.bind(o + 2, m.serverID)
        s.bind(o + 3, m.channelID)
        s.bind(o + 4, m.seq)
        text(o + 5, m.sender)
        s.bind(o + 6, m.sentTime)
        switch m.content {
        case .text(let value):
            s.bind(o + 7, Int64(0)); text(o + 8, value); s.bind(o + 9, ""); s.bind(o + 10, [UInt8]())
        case .custom(let type, let data):
            s.bind(o + 7, Int64(1)); s.bind(o + 8, ""); text(o + 9, type)
            s.bind(o + 10, data, in: arena)
        }
        text(o + 11, m.mentions.isEmpty ? "" : m.mentions.joined(separator: "\n"))
        s.bind(o + 12, m.mentionAll)
        s.bind(o + 13, m.needReceipt)
        text(o + 14, m.clientID)
        guard row == 0, needsFullInsert(m) else { return }
        s.bind(15, m.reply?.uid ?? 0)
        s.bind(16, m.reply?.sender ?? "")
        s.bind(17, m.reply?.excerpt ?? "")
        s.bind(18, m.threadRoot)
        s.bind(19, m.attachments.isEmpty ? "" : String(decoding: (try? JSONEncoder().encode(m.attachments)) ?? Data(), as: UTF8.self))
        s.bind(20, m.withheld)
        s.bind(21, m.webhook.map { String(decoding: (try? JSONEncoder().encode($0)) ?? Data(), as: UTF8.self) } ?? "")
    }

    /// Reads a row selected with `readColumns` in that order.
    static func readAll(_ s: Statement) -> MessageRecord {
        var m = read(s)
        if s.uint(14) != 0 { m.reply = ReplyRef(uid: s.uint(14), sender: s.text(15), excerpt: s.text(16)) }
        m.threadRoot = s.uint(17)
        m.changes.threadReplies = UInt32(clamping: s.uint(18))
        m.changes.threadLastReply = s.uint(19)
        m.changes.editedTime = s.uint(20)
        m.changes.editCount = UInt32(clamping: s.uint(21))
        if let kind = RemovalKind(rawValue: Int(s.int(22))) {
            m.changes.removal = Removal(kind: kind, by: s.text(23), time: s.uint(24))
        }
        let attachments = s.text(25)
        if !attachments.isEmpty { m.attachments = (try? JSONDecoder().decode([FileAttachment].self, from: Data(attachments.utf8))) ?? [] }
        m.withheld = s.bool(26)
        let webhook = s.text(27)
        if !webhook.isEmpty { m.webhook = try? JSONDecoder().decode(WebhookAuthor.self, from: Data(webhook.utf8)) }
        return m
    }

    /// Reads a row selected with `columns` in that order.
    static func read(_ s: Statement) -> MessageRecord {
        let content: MessageContent = s.int(6) == 1 ? .custom(type: s.text(8), data: s.blob(9)) : .text(s.text(7))
        let mentions = s.text(10)
        return MessageRecord(
            uid: s.uint(0), serverID: s.uint(1), channelID: s.uint(2), seq: s.uint(3), sender: s.text(4),
            sentTime: s.uint(5), content: content,
            mentions: mentions.isEmpty ? [] : mentions.split(separator: "\n").map(String.init),
            mentionAll: s.bool(11), needReceipt: s.bool(12), clientID: s.text(13))
    }
}
