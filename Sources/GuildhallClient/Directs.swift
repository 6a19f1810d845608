// Direct conversations in the SDK (`client.directs`, docs/features.md):
// opening one, writing in it, and its delivery and read receipts.

import GuildhallWire

extension GuildhallClient.Directs {
    func conversation(_ body: GHRequest.OneOf_Body) async throws -> GHConversation {
        let result = try await client.call(body)
        guard case .conversation(let c) = result else { throw GuildhallError(code: .internal, message: "unexpected answer \(result)") }
        return c
    }

    /// Opens (or gets) the direct conversation with `peer`.
    public func open(with peer: String) async throws -> GHConversation {
        var r = GHOpenConversation()
        r.peerID = peer
        return try await conversation(.openConversation(r))
    }

    /// My direct conversations, newest activity first.
    public func list() async throws -> [GHConversation] {
        let result = try await client.call(.listConversations(GHListConversations()))
        guard case .conversations(let list) = result else { throw GuildhallError(code: .internal, message: "unexpected answer \(result)") }
        return list.conversations
    }

    /// Sends a direct message; returns it as stored (status SENT). `attachments`: files uploaded for this conversation.
    public func send(_ text: String, to peer: String, clientID: String = "", replyTo: UInt64 = 0,
                     threadRoot: UInt64 = 0, attachments: [UInt64] = []) async throws -> GHChannelMessage {
        var body = GHMessageBody()
        body.text = text
        return try await send(body, to: peer, clientID: clientID, replyTo: replyTo, threadRoot: threadRoot, attachments: attachments)
    }

    public func send(_ body: GHMessageBody, to peer: String, clientID: String = "", replyTo: UInt64 = 0,
                     threadRoot: UInt64 = 0, attachments: [UInt64] = []) async throws -> GHChannelMessage {
        var r = GHSendDirectMessage()
        r.peerID = peer; r.body = body; r.clientID = clientID; r.replyTo = replyTo; r.threadRoot = threadRoot
        r.attachments = attachments
        return try await send(r)
    }

    func send(_ r: GHSendDirectMessage) async throws -> GHChannelMessage {
        let result = try await client.call(.sendDirectMessage(r))
        guard case .message(let m) = result else { throw GuildhallError(code: .internal, message: "unexpected answer \(result)") }
        return m
    }

    /// I read the peer's messages sent at or before `time` (0: now).
    @discardableResult
    public func sendReadReceipt(conversation: UInt64, time: UInt64 = 0) async throws -> GHConversation {
        var r = GHSendReadReceipt()
        r.conversationID = conversation; r.time = time
        return try await self.conversation(.sendReadReceipt(r))
    }

    /// I read this one direct message.
    public func ackMessageRead(_ messageUID: UInt64) async throws {
        var r = GHAckMessageRead()
        r.messageUid = messageUID
        let result = try await client.call(.ackMessageRead(r))
        guard case .ok = result else { throw GuildhallError(code: .internal, message: "unexpected answer \(result)") }
    }

    /// I read the whole conversation: its unread count goes to 0.
    @discardableResult
    public func ackConversationRead(_ conversation: UInt64) async throws -> GHConversation {
        var r = GHAckConversationRead()
        r.conversationID = conversation
        return try await self.conversation(.ackConversationRead(r))
    }

    /// Where my direct messages are (SENT, DELIVERED, READ), in the order asked.
    public func sentStatus(_ messageUIDs: [UInt64]) async throws -> [GHSentStatus] {
        var r = GHGetSentStatus()
        r.messageUids = messageUIDs
        let result = try await client.call(.getSentStatus(r))
        guard case .sentStatuses(let list) = result else { throw GuildhallError(code: .internal, message: "unexpected answer \(result)") }
        return list.statuses.map(\.status)
    }
}
