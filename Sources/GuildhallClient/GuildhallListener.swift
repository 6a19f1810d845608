// The callbacks an application implements to hear from the server. Called
// on the client's connection thread, in the order events arrived; keep them
// short and hand work elsewhere. Every method has an empty default.

import GuildhallWire

public enum ConnectionStatus: Sendable, Equatable {
    case connecting
    case connected(GHLoginResult)
    case disconnected(ClientError)
    /// The client will not reconnect (closed, replaced, or login refused).
    case closed
}

public protocol GuildhallListener: AnyObject, Sendable {
    /// A new message in a channel this session receives.
    func onMessage(_ message: GHChannelMessage)
    /// The same, with the recipient's own unread info for the channel after
    /// the message (nil for guests). By default calls `onMessage(_:)`.
    func onMessage(_ message: GHChannelMessage, unread: GHUnreadInfo?)
    /// Every message, with its offline-sync fields: `offline` for an item of offline
    /// sync, `left` items still to come in its package, `hasPackage` when
    /// more packages remain. Called after `onMessage(_:unread:)`; implement
    /// whichever shape you need.
    func onMessage(_ message: GHChannelMessage, left: Int, offline: Bool, hasPackage: Bool)
    /// Offline sync is over: later events are live. Comes once per login, at once when nothing was waiting.
    func onOfflineMessageSyncCompleted()
    /// A dropped session was resumed and the events it missed were replayed (before this call).
    func onResumed(replayed: Int)
    /// Received status set on another of the user's devices (flags turned on).
    func onReceivedStatusChanged(_ statuses: [GHReceivedStatus])
    /// Reading or delivery on another of the user's devices set flags on
    /// ranges of messages (a read position moved, messages were received).
    func onReceivedRangesChanged(_ ranges: [GHReceivedRange])
    /// A channel's unread info changed (CHANNEL_UNREAD_COUNT, or the user read on another device).
    func onUnreadChanged(_ info: GHUnreadInfo)
    /// A channel went from read to unread or back (CHANNEL_UNREAD_STATUS).
    func onUnreadStatus(_ status: GHUnreadStatus)
    /// Who is typing in a channel now (CHANNEL_TYPING): once per channel of a
    /// typing frame, each with that channel's typers in `typers`.
    func onTyping(_ typing: GHTypingEvent)
    /// Users' presence: the latest state of each that changed (coalesced), and at login who is not offline.
    func onPresence(_ presences: [GHPresence])
    /// A change inside the window of a member list this session watches (`members(of:watch:)`).
    func onMemberListUpdate(_ update: GHMemberListUpdate)
    /// A member asks for a read receipt on a message of a channel this user can read: respond with
    /// `respondReceipts` once the message is shown.
    func onMessageReceiptRequest(conversationType: GHConversationType, targetID: UInt64, messageUID: UInt64)
    /// New readers of a message this user asked receipts for (to the requester only): user id -> read time.
    func onMessageReceiptResponse(conversationType: GHConversationType, targetID: UInt64, messageUID: UInt64, readers: [String: UInt64])
    /// The same response with the message's reader count now (to the requester only).
    func onGroupMessageRead(_ response: GHReceiptResponse)
    /// A session of the peer received these direct messages of mine.
    func onMessagesDelivered(_ messageUIDs: [UInt64], conversationID: UInt64, by peer: String)
    /// The peer read these direct messages of mine.
    func onMessagesRead(_ messageUIDs: [UInt64], conversationID: UInt64, by peer: String)
    /// The peer read everything I sent in the conversation at or before `readTime`.
    func onReadReceiptReceived(conversationType: GHConversationType, targetID: String, readerID: String, readTime: UInt64)
    /// The peer marked the whole conversation read.
    func onConversationRead(from peer: String, conversationID: UInt64)
    /// A change to a server, channel or membership.
    func onSystemNotification(_ notification: GHSystemNotification)
    /// A message this session received was recalled, edited, deleted or
    /// reacted to; `update.message` is its state now. For a channel message,
    /// `unread` is the recipient's unread info after it (a recall or delete lowers the count).
    func onMessageUpdated(_ update: GHMessageUpdate, unread: GHUnreadInfo?)
    /// The server closed the session and said why.
    func onSessionClosed(_ reason: GHCloseReason, message: String)
    /// Connection state changes, including reconnects.
    func onConnectionStatus(_ status: ConnectionStatus)
}

extension GuildhallListener {
    public func onMessage(_ message: GHChannelMessage) {}
    public func onMessage(_ message: GHChannelMessage, unread: GHUnreadInfo?) { onMessage(message) }
    public func onMessage(_ message: GHChannelMessage, left: Int, offline: Bool, hasPackage: Bool) {}
    public func onOfflineMessageSyncCompleted() {}
    public func onMessageUpdated(_ update: GHMessageUpdate, unread: GHUnreadInfo?) {}
    public func onResumed(replayed: Int) {}
    public func onReceivedStatusChanged(_ statuses: [GHReceivedStatus]) {}
    public func onReceivedRangesChanged(_ ranges: [GHReceivedRange]) {}
    public func onUnreadChanged(_ info: GHUnreadInfo) {}
    public func onUnreadStatus(_ status: GHUnreadStatus) {}
    public func onTyping(_ typing: GHTypingEvent) {}
    public func onPresence(_ presences: [GHPresence]) {}
    public func onMemberListUpdate(_ update: GHMemberListUpdate) {}
    public func onMessageReceiptRequest(conversationType: GHConversationType, targetID: UInt64, messageUID: UInt64) {}
    public func onMessageReceiptResponse(conversationType: GHConversationType, targetID: UInt64, messageUID: UInt64, readers: [String: UInt64]) {}
    public func onGroupMessageRead(_ response: GHReceiptResponse) {}
    public func onMessagesDelivered(_ messageUIDs: [UInt64], conversationID: UInt64, by peer: String) {}
    public func onMessagesRead(_ messageUIDs: [UInt64], conversationID: UInt64, by peer: String) {}
    public func onReadReceiptReceived(conversationType: GHConversationType, targetID: String, readerID: String, readTime: UInt64) {}
    public func onConversationRead(from peer: String, conversationID: UInt64) {}
    public func onSystemNotification(_ notification: GHSystemNotification) {}
    public func onSessionClosed(_ reason: GHCloseReason, message: String) {}
    public func onConnectionStatus(_ status: ConnectionStatus) {}
}
