// How a MessageRecord maps onto a row of `messages`, both ways.
// Mentions are newline-joined: user ids cannot hold control characters.

import GuildhallCore

enum MessageRows {
    static let columns = "uid, server_id, channel_id, seq, sender, sent_time, kind, text, custom_type, payload, mentions, mention_all, need_receipt, client_id"

    static let insertSQL = "INSERT INTO messages(\(columns)) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)"

    static func bind(_ m: MessageRecord, to s: Statement) {
        s.bind(1, m.uid)
        s.bind(2, m.serverID)
        s.bind(3, m.channelID)
        s.bind(4, m.seq)
        s.bind(5, m.sender)
        s.bind(6, m.sentTime)
        switch m.content {
        case .text(let text):
            s.bind(7, Int64(0)); s.bind(8, text); s.bind(9, ""); s.bind(10, [UInt8]())
        case .custom(let type, let data):
            s.bind(7, Int64(1)); s.bind(8, ""); s.bind(9, type); s.bind(10, data)
        }
        s.bind(11, m.mentions.joined(separator: "\n"))
        s.bind(12, m.mentionAll)
        s.bind(13, m.needReceipt)
        s.bind(14, m.clientID)
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
