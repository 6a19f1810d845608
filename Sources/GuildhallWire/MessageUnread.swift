// A message event's unread info, whole. The event's shared part leaves out
// what the message itself says (MessageWire.UnreadHeader.ofMessage), so every
// reader of a binary event (the SDK, the JSON rendering for browsers) puts it
// back here, in one place. Pure.

extension GHEvent {
    /// The recipient's unread info for a message event's channel: a field
    /// the event left out (zero) is the message's own server, channel, sent
    /// time (the channel's newest message) or seq (its newest seq). nil
    /// without unread info (guests); other events' unread info as it is.
    public var messageUnread: GHUnreadInfo? {
        guard hasUnread else { return nil }
        var u = unread
        guard case .message(let m)? = body else { return u }
        if u.serverID == 0 { u.serverID = m.serverID }
        if u.channelID == 0 { u.channelID = m.channelID }
        if u.lastMsgTime == 0 { u.lastMsgTime = m.sentTime }
        if u.lastSeq == 0 { u.lastSeq = m.seq }
        return u
    }
}
