// Who receives what (README "What clients receive"): messages and notifications routed by
// subscriptions, the small-server exemption, mentions and targeted users.
// Each event is encoded once and queued on each recipient session once.
// Recipients come from the interest index (the subscription book, online
// members, user sessions, guests), so a send costs O(recipients). Loop thread only.

import GuildhallCore
import GuildhallLoop
import GuildhallWire

extension Home {
    // MARK: Messages

    /// Fans a committed message out. Member recipients get their own unread
    /// numbers in the event's trailer; unread subscribers get coalesced
    /// unread events instead of the message.
    /// `message` is `record`'s ChannelMessage bytes, already encoded for the sender's answer.
    /// `mentionOrds`: the inbox ord of each mentioned member's copy.
    /// `update`: the bytes are a MessageUpdate about `record` (MessageOperations.swift), for the same recipients;
    /// unread subscribers hear of it only when `unreadMoved`.
    func fanOut(_ record: MessageRecord, encoded message: [UInt8], from sender: HomeSession?, mentionOrds: [UserID: UInt64] = [:],
                update: Bool = false, unreadMoved: Bool = true, at time: UInt64? = nil) {
        let field = update ? WireField.Event.messageUpdate : WireField.Event.message
        guard let channel = directory.channel(record.channelID) else { return }
        // Framed once, at the first recipient: a message nobody receives live costs nothing more.
        var encoded: SharedBytes?
        func payload() -> SharedBytes {
            if let encoded { return encoded }
            let maxCount = UInt64(settings.unreadDisplayCap)
            let header = update
                ? MessageWire.UnreadHeader(serverID: channel.serverID, channelID: channel.id, maxCount: maxCount,
                                           lastMessageTime: channel.lastMessageTime, lastSeq: channel.lastSeq)
                : .ofMessage(seq: record.seq, sentTime: record.sentTime, maxCount: maxCount,
                             lastMessageTime: channel.lastMessageTime, lastSeq: channel.lastSeq)
            let event = MessageWire.SharedEvent(message: message, unread: header, field: field)
            let bytes = SharedBytes(count: event.size, channelMessage: update ? (0, 0, 0) : (channel.serverID, channel.id, record.seq)) {
                event.write(into: $0)
            }
            encoded = bytes
            return bytes
        }
        let mark = nextDeliveryMark()
        sender?.deliveryMark = mark
        let now = time ?? now()
        // A message's files go to each recipient with its own links (AttachmentLinks).
        let links = record.attachments.isEmpty ? nil : AttachmentLinks(settings)
        func own(_ shared: SharedBytes, _ s: HomeSession) -> SharedBytes {
            guard let links else { return shared }
            return links.payload(shared, adding: record.attachments, inUpdate: update, for: s.user, now: now)
        }

        // The payload is taken once per recipient list and lent to each
        // delivery, and the read positions are taken once here: reading them
        // through `self` per recipient retained and released their storage each time.
        let positions = self.positions
        let displayCap = UInt64(settings.unreadDisplayCap), mentionWindowMs = UInt64(settings.mentionWindowSeconds) * 1000
        func deliver(_ s: HomeSession, _ payload: SharedBytes) {
            guard s.deliveryMark != mark else { return }
            s.deliveryMark = mark
            let u = positions.unread(s.user, channel: channel, now: now, displayCap: displayCap, mentionWindowMs: mentionWindowMs)
            s.push(event: own(payload, s), unread: FrameEncoding.RecipientUnread(unreadCount: u.unreadCount, mentionedCount: u.mentionedCount,
                                                                         ackTimestamp: u.ackTimestamp, readSeq: u.readSeq),
                   cursor: mentionOrds.isEmpty ? 0 : mentionOrds[s.user] ?? 0)
        }

        if directory.isSmall(channel.serverID) {
            // Every online member: one event to each gateway that has some (interest split in two).
            interest.sync()
            if interest.hasMembersOnline(channel.serverID) {
                interest.deliver(ChannelEvent(payload: payload(), channel: channel.tip, except: sender?.key ?? 0, toMembers: true,
                                              cursors: mentionOrds.isEmpty ? [:] : mentionOrds.filter { $0.value != 0 },
                                              hiddenFrom: onlineMembersHidden(from: channel),
                                              seq: update ? 0 : record.seq, files: record.attachments, filesInUpdate: update))
            }
        } else {
            let target = SubscriptionTarget(server: channel.serverID, channel: channel.id)
            // Subscribers: one event to each gateway that has some, which
            // finds them and writes their trailers (interest split in two).
            interest.sync()
            if interest.loops(holding: channel.id) != nil {
                var cursors = mentionOrds
                if !cursors.isEmpty { cursors = cursors.filter { $0.value != 0 } }
                interest.deliver(ChannelEvent(payload: payload(), channel: channel.tip, except: sender?.key ?? 0, toMembers: false, cursors: cursors,
                                              seq: update ? 0 : record.seq, files: record.attachments, filesInUpdate: update))
            }
            for user in record.mentions where directory.canView(user, channel) {
                for s in registry.sessions(of: user).values where book.level(of: s.key, in: channel.id) != .messages {
                    deliver(s, payload())
                }
            }
            for key in book.holders(.channelUnreadCount, target) where unreadMoved {
                if let s = registry.all[key], s.deliveryMark != mark, s.user != record.sender { s.owe(.info, channel.id) }
            }
            for key in book.holders(.channelUnreadStatus, target) where unreadMoved {
                if let s = registry.all[key], s.deliveryMark != mark, s.user != record.sender { s.owe(.status, channel.id) }
            }
        }
        if directory.guestVisible(channel) {
            let guests = book.holders(.guestChannel, SubscriptionTarget(server: channel.serverID, channel: channel.id))
            if !guests.isEmpty {
                let guestPayload = SharedBytes(MessageWire.event(message: message, field: field))
                for key in guests {
                    guard let s = registry.all[key], s.deliveryMark != mark else { continue }
                    s.deliveryMark = mark
                    s.push(event: own(guestPayload, s))
                }
            }
        }
    }

    /// The online members of a small server who may not view `channel` (none
    /// unless its permissions restrict viewing somewhere): its events skip them.
    func onlineMembersHidden(from channel: ChannelRecord) -> Set<UserID> {
        guard !directory.everyoneViews(channel.serverID) else { return [] }
        var hidden = Set<UserID>()
        for s in registry.onlineMembers(of: channel.serverID).values where !directory.canView(s.user, channel) { hidden.insert(s.user) }
        return hidden
    }

    /// A fresh mark for one fan-out (see `Session.deliveryMark`).
    func nextDeliveryMark() -> UInt64 {
        deliveryMarks += 1
        return deliveryMarks
    }

    static func frame(_ event: GHEvent) -> GHFrame {
        var f = GHFrame()
        f.event = event
        return f
    }

    // MARK: Notifications

    /// Tells a committed notice's audience (`copy` is its event): the
    /// small-server exemption, its subscribers and guests; each session once,
    /// and none of the targeted users', whose copies went as addressed items.
    func tellAudience(_ notice: Notice, _ copy: EventCopy) {
        guard let server = notice.server else { return }
        let payload = copy.payload
        let mark = nextDeliveryMark()
        for user in notice.targeted { for s in registry.sessions(of: user).values { s.deliveryMark = mark } }
        // A channel's notice skips members who may not view the channel (guests see it by the guest rules).
        let restricted: ChannelRecord? = if case .channel(let c, _) = notice.audience, !directory.everyoneViews(c.serverID) { c } else { nil }
        func deliver(_ s: HomeSession) {
            guard s.deliveryMark != mark else { return }
            if let c = restricted, directory.permissions(of: s.user, in: c.serverID) != nil, !directory.canView(s.user, c) { return }
            s.deliveryMark = mark
            s.push(event: payload)
        }
        func deliver(_ keys: Set<SessionKey>) { for k in keys { if let s = registry.all[k] { deliver(s) } } }

        if directory.isSmall(server) {
            for s in registry.onlineMembers(of: server).values { deliver(s) }
        }
        deliver(book.holders(.serverNotifications, SubscriptionTarget(server: server)))
        switch notice.audience {
        case .server(let id, let isPublic):
            if isPublic { deliver(book.holders(.guestServer, SubscriptionTarget(server: id))) }
        case .channel(let c, let isPublic):
            let t = SubscriptionTarget(server: c.serverID, channel: c.id)
            for kind in [SubscriptionKind.channelMessages, .channelUnreadCount, .channelUnreadStatus] { deliver(book.holders(kind, t)) }
            if isPublic {
                deliver(book.holders(.guestServer, SubscriptionTarget(server: c.serverID)))
                if directory.guestVisible(c) { deliver(book.holders(.guestChannel, t)) }
            }
        case .nobody: break
        }
    }

    /// Sessions a message in `channel` reaches live at most (subscribers, or online members of a small server).
    func audienceSize(_ channel: ChannelRecord) -> Int {
        if directory.isSmall(channel.serverID) { return registry.onlineMembers(of: channel.serverID).count }
        return book.holders(.channelMessages, SubscriptionTarget(server: channel.serverID, channel: channel.id)).count
    }
}
