// Direct conversations (docs/features.md), of a pair or a group
// (GroupConversations.swift): open and list them, send (durable before
// acknowledged; each recipient's copy is an inbox item, so offline devices
// get it in their sync), delivery receipts, read receipts by time, per
// message and for the whole conversation, and the sent status of the
// caller's messages. Receipts of messages reach their senders' sessions and
// inboxes; in a group, a read by time reaches every other member. Loop thread only.
//
// The user home (docs/architecture.md: per-user state has a home chosen by user id):
// this file, GroupConversations.swift, Blocking.swift and ReceivedStatus.swift
// are its parts (offline sync is a part of its own, OfflineDelivery.swift);
// it reaches the rest of the loop's state through `home`.

import GuildhallCore
import GuildhallStore
import GuildhallWire

/// A direct message handed to the store, as its commit settles it (`StateChange.directMessageSent`).
struct SentDirectMessage {
    let record: MessageRecord
    /// The send's request id and session, answered once stored.
    let id: UInt64
    let sender: HomeSession
    /// The files it claimed (Attachments.swift).
    let attachmentIDs: [UInt64]
}

final class UserHome: HomePart {
    unowned let services: HomeServices
    /// What a direct send checks and claims (privacy, references, files), who
    /// hears typing stop, and the reader's other sessions: parts built after
    /// this one, and handed to it then (`use`).
    private(set) unowned var attachments: Attachments!
    private(set) unowned var directPrivacy: DirectPrivacy!
    private(set) unowned var messageOperations: MessageOperations!
    private(set) unowned var typing: ChannelTyping!
    private(set) unowned var reading: Reading!
    /// Direct conversations.
    var directs = DirectConversations()

    init(services: HomeServices) { self.services = services }

    /// The parts built after this one that it uses.
    func use(_ attachments: Attachments, _ directPrivacy: DirectPrivacy, _ messageOperations: MessageOperations, _ typing: ChannelTyping,
             _ reading: Reading) {
        self.attachments = attachments
        self.directPrivacy = directPrivacy
        self.messageOperations = messageOperations
        self.typing = typing
        self.reading = reading
    }
}

extension UserHome {
    // MARK: Conversations

    /// The conversation of `user` with `peer`, opened if new; the row write
    /// (a no-op when it exists) goes with the caller's writes. A new one is
    /// held unlisted until a commit with its row (`DirectConversation.stored`).
    func conversation(with peer: UserID, for user: UserID, now: UInt64) throws(Failure) -> (DirectConversation, StoreWrite) {
        if let problem = Validation.userIDProblem(peer) { throw Failure.badRequest("peer_id: \(problem)") }
        guard peer != user else { throw Failure.badRequest("a direct conversation needs two different users") }
        if let c = directs.between(user, peer) { return (c, Self.row(c)) }
        var c = DirectConversation(id: services.newID(now: now, shard: ShardPlan.shard(conversationOf: user, peer, shards: settings.shards)),
                                   users: (user, peer), createdAt: now)
        c.stored = false
        directs.add(c)
        return (c, Self.row(c))
    }

    private static func row(_ c: DirectConversation) -> StoreWrite {
        .conversation(id: c.id, users: [c.users.0, c.users.1], createdAt: c.createdAt)
    }

    /// A conversation the session's user is in (any other is answered as one that does not exist).
    func ownConversation(_ id: UInt64, for s: HomeSession) throws(Failure) -> DirectConversation {
        guard let c = directs[id], c.includes(s.user) else { throw Failure.notFound("conversation \(id) not found") }
        return c
    }

    func conversationInfo(_ c: DirectConversation, for user: UserID) -> GHConversation {
        var g = GHConversation()
        g.conversationID = c.id
        g.unreadCount = c.unread(for: user)
        g.lastSeq = c.lastSeq
        g.lastMessageTime = c.lastMessageTime
        g.createdAt = c.createdAt
        // One no longer in a group (told of their removal) has no side.
        g.readTime = c.includes(user) ? c.side(user).readTime : 0
        if c.isGroup {
            g.isGroup = true
            g.name = c.name
            g.ownerID = c.owner
            g.memberIds = c.members
            g.membersMayAdd = c.membersMayAdd
        } else {
            g.peerID = c.peer(of: user)
        }
        return g
    }

    func openConversation(_ r: GHOpenConversation, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            let (c, write) = try conversation(with: r.peerID, for: s.user, now: now())
            var e = Effects(writes: [write], reply: .read(.conversation(c, for: s.user)))
            e.changes = [.conversationStored(c.id)]
            runner.carryOut(e, answering: id, to: s)
        }
    }

    func listConversations(id: UInt64, from s: HomeSession) {
        var list = GHConversationList()
        list.conversations = directs.conversations(of: s.user)
            .sorted { ($0.lastMessageTime, $0.id) > ($1.lastMessageTime, $1.id) }
            .map { conversationInfo($0, for: s.user) }
        s.respond(id, .conversations(list))
    }

    /// A direct message as `viewer` sees it: with its recipient, and its sent status when the viewer sent it.
    func directMessage(_ m: MessageRecord, for viewer: UserID) -> GHChannelMessage {
        var g = services.withFiles(GHChannelMessage(m), m, to: viewer)
        guard let c = directs[m.channelID] else { return g }
        if !c.isGroup { g.recipientID = c.peer(of: m.sender) }
        if m.sender == viewer {
            let (delivered, read, of) = c.receipts(ofMessageBy: m.sender, uid: m.uid, seq: m.seq, sentTime: m.sentTime)
            // Withheld: never delivered, as to a user who never comes.
            (g.deliveredCount, g.readCount, g.recipientCount) = m.withheld ? (0, 0, 1) : (UInt32(delivered), UInt32(read), UInt32(of))
            g.sentStatus = m.withheld ? .sent : GHSentStatus(rawValue: SentStatus(delivered: delivered, read: read, of: of).rawValue) ?? .sent
        }
        return g
    }

    /// Whether `user` may see the direct message `m` (one withheld from its recipient only its sender sees).
    func canSeeDirect(_ m: MessageRecord, _ user: UserID) -> Bool {
        directs[m.channelID]?.includes(user) == true && (!m.withheld || m.sender == user)
    }

    // MARK: Sending

    /// The conversation a send (or upload) names: one the caller is in by id,
    /// or the pair with `peer` (opened if new; its row write goes with the caller's writes).
    func conversation(id cid: UInt64, peer: UserID, from s: HomeSession, now: UInt64) throws(Failure) -> (DirectConversation, StoreWrite?) {
        guard (cid == 0) != peer.isEmpty else { throw Failure.badRequest("name exactly one of conversation_id and peer_id") }
        if cid != 0 { return (try ownConversation(cid, for: s), nil) }
        let (c, write) = try conversation(with: peer, for: s.user, now: now)
        return (c, c.stored ? nil : write)
    }

    /// `checkResend`: false once the client id was found to be new after all (see `answeredAsResend`).
    /// `files`: what the files it names were found to be (`Attachments.resolve`, which claimed them), once checked.
    /// `cleared`: the peer takes the sender's direct messages (DirectPrivacy.swift), once asked.
    func sendDirectMessage(_ r: GHSendDirectMessage, id: UInt64, from s: HomeSession, checkResend: Bool = true, references: References? = nil,
                           files: [FileAttachment]? = nil, cleared: Bool = false) {
        // Files claimed for this send are let go if it is refused before it is carried out.
        var carriedOut = false
        defer { if files != nil, !carriedOut { attachments.release(r.attachments) } }
        attempt(id, s) { () throws(Failure) in
            // A message with files may have no text.
            let content = !r.attachments.isEmpty && r.body == GHMessageBody() ? .text("") : try r.body.domain()
            try Validation.message(content: content, mentions: [], clientID: r.clientID, maxBodyBytes: settings.maxBodyBytes,
                                   maxMentions: settings.maxMentions, files: r.attachments, maxFiles: settings.filesPerMessage)
            if checkResend, !r.clientID.isEmpty, services.answeredAsResend(r.clientID, id: id, from: s, as: { self.directMessage($0, for: s.user) },
                                             otherwise: { self.sendDirectMessage(r, id: id, from: s, checkResend: false) }) { return }
            let now = now()
            var (c, conversationWrite) = try conversation(id: r.conversationID, peer: r.peerID, from: s, now: now)
            if !c.isGroup, directs.blocks(s.user, c.peer(of: s.user)) {
                throw Failure.forbidden("you block \(c.peer(of: s.user)); unblock them to write to them")
            }
            // One who wrote in the pair may always be answered; otherwise the peer may take only server-mates' messages.
            if !c.isGroup, !cleared, c.side(c.peer(of: s.user)).sentCount == 0 {
                return directPrivacy.check(from: s.user, to: [c.peer(of: s.user)]) { failure in
                    if let failure { return s.fail(id, failure) }
                    self.sendDirectMessage(r, id: id, from: s, checkResend: false, cleared: true)
                }
            }
            if references == nil, r.replyTo != 0 || r.threadRoot != 0 {
                return messageOperations.references(r.replyTo, r.threadRoot, in: c.id, id: id, for: s) { found in
                    self.sendDirectMessage(r, id: id, from: s, checkResend: false, references: found, cleared: true)
                }
            }
            if !r.attachments.isEmpty, files == nil {
                // Checked and claimed last: nothing after this waits, so the send is stored or refused at once.
                return attachments.resolve(r.attachments, serverID: 0, channelID: c.id, id: id, for: s) { found in
                    self.sendDirectMessage(r, id: id, from: s, checkResend: false, references: references, files: found, cleared: true)
                }
            }
            let (seq, time) = c.append(now: now)
            directs[c.id] = c
            // A message ends its sender's typing, as in a channel.
            if typing.board.stopped(s.user, in: c.id) { typing.directTypersChanged(c, by: s.user) }
            var record = MessageRecord(uid: services.ids.next(nowMillis: now), serverID: 0, channelID: c.id, seq: seq, sender: s.user, sentTime: time,
                                       content: content, mentions: [], mentionAll: false, needReceipt: false, clientID: r.clientID)
            record.attachments = files ?? []
            record.withheld = !c.isGroup && directs.isWithheld(from: c, sender: s.user)
            var threadWrites: [StoreWrite] = []
            if let references { record.refer(references, writes: &threadWrites) }
            let writes: [StoreWrite] = (conversationWrite.map { [$0] } ?? []) + [.message(record)] + threadWrites
            if !r.clientID.isEmpty { services.recentSends.sending(sender: s.user, clientID: r.clientID) }
            // Each recipient's copy is addressed to them (one copy for all, unless its files need links of their own):
            // a pair's as the stored message, read back at sync; a group's as the event itself, since the
            // recipient's home, which syncs it, may not hold the group to tell a group's message from a pair's.
            let recipients = record.withheld ? [] : c.others(of: s.user)
            let copy = EventCopy(.message(directMessage(record, for: recipients.first ?? s.user)))
            var effects = Effects(writes: writes, addressed: recipients.map { user in
                let own = record.attachments.isEmpty || user == recipients.first ? copy : EventCopy(.message(self.directMessage(record, for: user)))
                return AddressedItem(user: user, stored: c.isGroup ? .event(own) : .message(record.uid), live: .push(own),
                                     pushOwed: c.isGroup ? record.uid : 0)
            })
            effects.changes = [.directMessageSent(SentDirectMessage(record: record, id: id, sender: s, attachmentIDs: r.attachments))]
            // The sender's other devices see what it sent (with links of their own when it carries files).
            let own = record.attachments.isEmpty ? copy : EventCopy(.message(directMessage(record, for: record.sender)))
            effects.deliveries = [Delivery(.otherSessions(of: record.sender, except: s.key), own)]
            effects.failure = Home.sendFailure
            runner.carryOut(effects, answering: id, to: s)
            carriedOut = true
        }
    }

    /// A stored direct message, settled: its files are let go, the conversation takes it, the sender and its waiting resends are answered.
    func directMessageSent(_ m: SentDirectMessage) {
        attachments.release(m.attachmentIDs)
        let waiters = services.resendsSettled(m.record, ok: true)
        services.metrics.messagesDirect.increment()
        directs[m.record.channelID]?.committed(by: m.record.sender, seq: m.record.seq, time: m.record.sentTime, withheld: m.record.withheld)
        let mine = directMessage(m.record, for: m.record.sender)
        m.sender.respond(m.id, .message(mine))
        for (w, wid) in waiters { w.respond(wid, .message(mine)) }
        services.recentSends.expire(before: now() - UInt64(settings.dedupWindowSeconds) * 1000)
    }

    /// A stored removal of `sender`'s message sent at `sentTime`: the others' unread counts leave it out.
    func messageRemoved(from conversation: UInt64, sender: UserID, sentTime: UInt64) {
        _ = directs[conversation]?.removed(by: sender, sentTime: sentTime)
    }

    /// A direct message whose commit failed (the runner answered it 503): its files are let go, its waiting resends answered too.
    func directMessageNotSent(_ m: SentDirectMessage) {
        attachments.release(m.attachmentIDs)
        _ = services.resendsSettled(m.record, ok: false)
    }

    // MARK: Receipts

    /// A user's receipt side of one conversation, decided on `before` (`DirectConversation.takeReceipts`).
    struct DecidedSide {
        let conversation: UInt64
        let before: DirectConversation.Side
        let after: DirectConversation.Side
    }

    /// Commits the decided sides with each receipt as an item addressed to
    /// its message's sender; once durable the conversations take the sides,
    /// then the answer, then the senders' sessions hear of it, and the
    /// reader's other sessions of the flags it set (ReceivedRanges.swift).
    /// `rows`: what to store, when not the sides' rows.
    private func receiptEffects(_ receipts: [(GHDirectReceipt, to: UserID)], sides: [DecidedSide], rows: [StoreWrite]? = nil,
                                from s: HomeSession, reply: Reply) -> Effects {
        var items = receipts.map { d, sender in AddressedItem.event(EventCopy(.directReceipt(d)), to: sender) }
        // A message read one by one: the reader's other devices get it as a status, in their sync too.
        let singly = sides.flatMap { d in d.after.readSingly.keys.filter { d.before.readSingly[$0] == nil } }.sorted()
        if !singly.isEmpty {
            var list = GHReceivedStatusList()
            list.statuses = singly.map { GHReceivedStatus(uid: $0, [.read, .retrieved]) }
            let copy = EventCopy(.receivedStatus(list))
            items.append(AddressedItem(user: s.user, stored: .event(copy), live: .pushExceptOrigin(copy, origin: s.key)))
        }
        var e = Effects(writes: rows ?? sides.map { .directSide(conversation: $0.conversation, $0.after) }, addressed: items, reply: reply)
        e.changes = [.directReceipts(sides, reader: s.user, origin: s.key)]
        return e
    }

    /// Receipts, once stored (`StateChange.directReceipts`).
    func receiptsTaken(_ sides: [DecidedSide], reader: UserID, origin: SessionKey) {
        for d in sides { directs[d.conversation]?.takeReceipts(d.after, decidedOn: d.before) }
        for d in sides { tellOtherDevices(d, of: reader, except: origin) }
    }

    /// The ranges a side's receipts set, for the reader's other sessions.
    private func tellOtherDevices(_ d: DecidedSide, of reader: UserID, except origin: SessionKey) {
        if d.after.deliveredSeq > d.before.deliveredSeq {
            reading.owe(received: .upTo(d.after.deliveredSeq, in: d.conversation, read: false), of: reader, except: origin)
        }
        if d.after.readTime > d.before.readTime {
            reading.owe(received: .upTo(sentUntil: d.after.readTime, in: d.conversation, read: true), of: reader, except: origin)
        }
    }

    private func receipt(_ c: DirectConversation, reader: UserID, _ status: GHSentStatus) -> GHDirectReceipt {
        var d = GHDirectReceipt()
        d.conversationType = .direct
        d.conversationID = c.id
        d.readerID = reader
        d.status = status
        return d
    }

    /// Looks up direct messages sent to the session's user, grouped by conversation.
    private func receivedDirect(_ uids: [MessageUID], id: UInt64, from s: HomeSession,
                                then: @escaping ([UInt64: [MessageRecord]]) throws(Failure) -> Void) {
        guard uids.count <= Limits.maxIdsPerRequest else {
            s.fail(id, Failure(.limitReached, "at most \(Limits.maxIdsPerRequest) message UIDs per request"))
            return
        }
        read(.messages(uids: uids)) { [self] result in
            attempt(id, s) { () throws(Failure) in
                guard result.error == nil else { throw Failure(.unavailable, "storage is unavailable; retry later") }
                var byConversation: [UInt64: [MessageRecord]] = [:]
                for m in result.messages where m.serverID == 0 && m.sender != s.user && canSeeDirect(m, s.user) {
                    byConversation[m.channelID, default: []].append(m)
                }
                try then(byConversation)
            }
        }
    }

    /// A change to the session's user's receipts, decided once the one before
    /// it committed (`change(_:in:)`): only the user's own receipts move its sides.
    private func receiptChange(from s: HomeSession, id: UInt64,
                               _ decide: @escaping (_ settle: @escaping (Effects?) -> Void) throws(Failure) -> Void) {
        change(.directReceipts(s.user), id: id, from: s, decide)
    }

    func markDelivered(_ r: GHMarkDelivered, id: UInt64, from s: HomeSession) {
        guard settings.deliveryReceipts == "on" else {
            s.respond(id, .ok(GHOk()))
            return
        }
        receivedDirect(r.messageUids, id: id, from: s) { [self] byConversation throws(Failure) in
            receiptChange(from: s, id: id) { [self] settle throws(Failure) in
                var receipts: [(GHDirectReceipt, to: UserID)] = []
                var sides: [DecidedSide] = []
                for (cid, messages) in byConversation {
                    guard var c = directs[cid] else { continue }
                    let before = c.side(s.user)
                    let fresh = messages.filter { $0.seq > before.deliveredSeq }.sorted { $0.seq < $1.seq }
                    guard let top = fresh.last, c.delivered(to: s.user, upTo: top.seq) else { continue }
                    // Each sender hears of their own messages (in a pair, the one peer).
                    for (sender, theirs) in Dictionary(grouping: fresh, by: \.sender).sorted(by: { $0.key < $1.key }) {
                        var d = receipt(c, reader: s.user, .delivered)
                        d.messageUids = theirs.map(\.uid)
                        receipts.append((d, sender))
                    }
                    sides.append(DecidedSide(conversation: cid, before: before, after: c.side(s.user)))
                }
                guard !receipts.isEmpty else {
                    s.respond(id, .ok(GHOk()))
                    return settle(nil)
                }
                settle(receiptEffects(receipts, sides: sides, from: s, reply: .ok))
            }
        }
    }

    func sendReadReceipt(_ r: GHSendReadReceipt, id: UInt64, from s: HomeSession) {
        receiptChange(from: s, id: id) { [self] settle throws(Failure) in
            let c = try ownConversation(r.conversationID, for: s)
            let now = now()
            let time = r.time == 0 ? now : min(r.time, now)
            let count: ReadRequest = c.isGroup ? .groupSentCount(conversation: c.id, reader: s.user, upTo: time)
                : .directSentCount(conversation: c.id, sender: c.peer(of: s.user), upTo: time)
            read(count) { [self] result in
                guard result.error == nil else {
                    s.fail(id, Failure(.unavailable, "storage is unavailable; retry later"))
                    return settle(nil)
                }
                // Gone from it while the count was read (a group's member who left).
                guard var c = directs[r.conversationID], c.includes(s.user) else {
                    s.fail(id, Failure.notFound("conversation \(r.conversationID) not found"))
                    return settle(nil)
                }
                let before = c.side(s.user)
                guard c.read(by: s.user, upTo: time, count: result.count) else {
                    s.respond(id, .conversation(conversationInfo(c, for: s.user)))
                    return settle(nil)
                }
                var d = receipt(c, reader: s.user, .read)
                d.readTime = time
                settle(receiptEffects(c.others(of: s.user).map { (d, $0) }, sides: [DecidedSide(conversation: c.id, before: before, after: c.side(s.user))], from: s,
                                      reply: .read(.conversation(c, for: s.user))))
            }
        }
    }

    func ackMessageRead(_ r: GHAckMessageRead, id: UInt64, from s: HomeSession) {
        receivedDirect([r.messageUid], id: id, from: s) { [self] byConversation throws(Failure) in
            receiptChange(from: s, id: id) { [self] settle throws(Failure) in
                guard let m = byConversation.values.first?.first, var c = directs[m.channelID] else {
                    throw Failure.notFound("no direct message \(r.messageUid) was sent to you")
                }
                let before = c.side(s.user)
                guard c.readOne(by: s.user, uid: m.uid, sentTime: m.sentTime) else {
                    s.respond(id, .ok(GHOk()))
                    return settle(nil)
                }
                var d = receipt(c, reader: s.user, .read)
                d.messageUids = [m.uid]
                // The side's row keeps no singly read messages: their own rows do.
                settle(receiptEffects([(d, m.sender)], sides: [DecidedSide(conversation: c.id, before: before, after: c.side(s.user))],
                                      rows: [.directRead(conversation: c.id, reader: s.user, uid: m.uid, sentTime: m.sentTime)], from: s, reply: .ok))
            }
        }
    }

    func ackConversationRead(_ r: GHAckConversationRead, id: UInt64, from s: HomeSession) {
        receiptChange(from: s, id: id) { [self] settle throws(Failure) in
            var c = try ownConversation(r.conversationID, for: s)
            let before = c.side(s.user)
            guard c.readAll(by: s.user, now: now()) else {
                s.respond(id, .conversation(conversationInfo(c, for: s.user)))
                return settle(nil)
            }
            var d = receipt(c, reader: s.user, .read)
            d.readTime = c.side(s.user).readTime
            d.conversationRead = true
            settle(receiptEffects(c.others(of: s.user).map { (d, $0) }, sides: [DecidedSide(conversation: c.id, before: before, after: c.side(s.user))], from: s,
                                  reply: .read(.conversation(c, for: s.user))))
        }
    }

    func getSentStatus(_ r: GHGetSentStatus, id: UInt64, from s: HomeSession) {
        guard r.messageUids.count <= Limits.maxIdsPerRequest else {
            s.fail(id, Failure(.limitReached, "at most \(Limits.maxIdsPerRequest) message UIDs per request"))
            return
        }
        read(.messages(uids: r.messageUids)) { [self] result in
            guard result.error == nil else {
                s.fail(id, Failure(.unavailable, "storage is unavailable; retry later"))
                return
            }
            var found: [MessageUID: MessageRecord] = [:]
            for m in result.messages { found[m.uid] = m }
            var list = GHSentStatusList()
            list.statuses = r.messageUids.map { uid in
                var st = GHMessageSentStatus()
                st.messageUid = uid
                if let m = found[uid], m.serverID == 0, m.sender == s.user { st.status = directMessage(m, for: s.user).sentStatus }
                return st
            }
            s.respond(id, .sentStatuses(list))
        }
    }
}
