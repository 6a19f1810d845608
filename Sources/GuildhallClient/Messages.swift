// Channel messages in the SDK (`client.messages`): sending, history, and
// messages by UID; and each message's received status (docs/features.md).

import GuildhallWire

extension GuildhallClient.Messages {
    /// Sends text; returns the stored message (UID, seq, sentTime assigned by the server).
    /// `replyTo`: a message of the channel this one answers; `threadRoot`: the thread it joins;
    /// `attachments`: files uploaded for this channel (`createUpload`), whose bytes arrived (the text may then be empty).
    public func send(_ text: String, to channel: UInt64, mentions: [String] = [], mentionAll: Bool = false,
                     needReceipt: Bool = false, clientID: String = "", replyTo: UInt64 = 0, threadRoot: UInt64 = 0,
                     attachments: [UInt64] = []) async throws -> GHChannelMessage {
        var body = GHMessageBody()
        body.text = text
        return try await send(body, to: channel, mentions: mentions, mentionAll: mentionAll, needReceipt: needReceipt, clientID: clientID,
                              replyTo: replyTo, threadRoot: threadRoot, attachments: attachments)
    }

    public func send(_ body: GHMessageBody, to channel: UInt64, mentions: [String] = [], mentionAll: Bool = false,
                     needReceipt: Bool = false, clientID: String = "", replyTo: UInt64 = 0, threadRoot: UInt64 = 0,
                     attachments: [UInt64] = []) async throws -> GHChannelMessage {
        var r = GHSendMessage()
        r.channelID = channel; r.body = body; r.mentions = mentions; r.mentionAll = mentionAll
        r.needReceipt = needReceipt; r.clientID = clientID; r.replyTo = replyTo; r.threadRoot = threadRoot
        r.attachments = attachments
        return try await client.expect(.sendMessage(r)) { if case .message(let m) = $0 { m } else { nil } }
    }

    /// A page of history: messages older than `before` (0 = newest), in ascending seq order.
    public func history(of channel: UInt64, before seq: UInt64 = 0, limit: UInt32 = 50) async throws -> GHMessagePage {
        try await history(of: channel, seq: seq, direction: .before, limit: limit)
    }

    /// A page of history: messages newer than `after` (0 = oldest), in ascending seq order.
    public func history(of channel: UInt64, after seq: UInt64, limit: UInt32 = 50) async throws -> GHMessagePage {
        try await history(of: channel, seq: seq, direction: .after, limit: limit)
    }

    private func history(of channel: UInt64, seq: UInt64, direction: GHHistoryDirection, limit: UInt32) async throws -> GHMessagePage {
        var r = GHGetHistory()
        r.channelID = channel; r.seq = seq; r.direction = direction; r.limit = limit
        return try await client.expect(.getHistory(r)) { if case .messages(let p) = $0 { p } else { nil } }
    }

    public func get(_ uids: [UInt64]) async throws -> [GHChannelMessage] {
        var r = GHGetMessages()
        r.uids = uids
        return try await client.expect(.getMessages(r)) { if case .messages(let p) = $0 { p.messages } else { nil } }
    }

    /// Turns on received-status flags of messages for this user on every device.
    @discardableResult
    public func setReceivedStatus(_ uids: [UInt64], read: Bool = false, listened: Bool = false, downloaded: Bool = false,
                                  retrieved: Bool = false) async throws -> [GHReceivedStatus] {
        var r = GHSetReceivedStatus()
        r.messageUids = uids
        r.isRead = read; r.isListened = listened; r.isDownloaded = downloaded; r.isRetrieved = retrieved
        let result = try await client.call(.setReceivedStatus(r))
        guard case .receivedStatuses(let list) = result else { throw GuildhallError(code: .internal, message: "unexpected answer \(result)") }
        return list.statuses
    }

    /// This user's received status of messages, in the order asked.
    public func receivedStatus(_ uids: [UInt64]) async throws -> [GHReceivedStatus] {
        var r = GHGetReceivedStatus()
        r.messageUids = uids
        let result = try await client.call(.getReceivedStatus(r))
        guard case .receivedStatuses(let list) = result else { throw GuildhallError(code: .internal, message: "unexpected answer \(result)") }
        return list.statuses
    }
}
