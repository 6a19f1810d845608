// Operations on sent messages (docs/features.md): recall, edit, delete and quick
// comments, on channel messages and direct messages alike. Each reads the
// message, decides (who may, the recall window, the limits), commits, then
// answers the actor with the message as it is now and sends a
// `MessageUpdate` to everyone who received the message (the actor's own
// session excepted) along the message's own paths: a channel's fan-out with
// each recipient's corrected unread numbers, the mentioned users' inboxes,
// a conversation's two users. Operations on one message run one after
// another, so each decides on the state the previous one left. Loop thread only.

import GuildhallCore
import GuildhallStore
import GuildhallWire

final class MessageOperations: HomePart {
    unowned let services: HomeServices
    private unowned let userHome: UserHome
    private unowned let pinboard: Pinboard
    private unowned let moderation: Moderation
    private unowned let groupReceipts: GroupReceipts
    private unowned let auditTrail: AuditTrail
    /// An update fans out as its message did (Home.fanOut): the record, its
    /// encoded update, the actor, the mentioned users' inbox cursors, and
    /// whether unread subscribers hear of it (a removal).
    private let fanOutUpdate: (MessageRecord, [UInt8], HomeSession, [UserID: UInt64], Bool) -> Void

    init(services: HomeServices, userHome: UserHome, pinboard: Pinboard, moderation: Moderation, groupReceipts: GroupReceipts,
         auditTrail: AuditTrail, fanOutUpdate: @escaping (MessageRecord, [UInt8], HomeSession, [UserID: UInt64], Bool) -> Void) {
        self.services = services
        self.userHome = userHome
        self.pinboard = pinboard
        self.moderation = moderation
        self.groupReceipts = groupReceipts
        self.auditTrail = auditTrail
        self.fanOutUpdate = fanOutUpdate
    }

    enum Operation {
        case recall, edit(MessageContent), delete
        case react(UInt32, add: Bool)
    }

    /// Where a message lives, as the caller may reach it.
    enum Place {
        case channel(ChannelRecord)
        case direct(DirectConversation)
    }
}

/// A sent message's change, as its commit settles it (`StateChange.messageChanged`).
struct ChangedMessage {
    let before: MessageRecord
    let after: MessageRecord
    /// What everyone who received the message hears of it.
    let update: GHMessageUpdate
    let place: MessageOperations.Place
    /// Its channel's pin of it goes with its removal.
    let unpins: Bool
    /// The users the update is addressed to, in the order of the effects' addressed items.
    let mentioned: [UserID]
    /// The request, answered once stored, and the actor's session.
    let id: UInt64
    let actor: HomeSession

    var isRemoval: Bool { after.changes.removal != nil }
}

extension MessageOperations {
    func recall(_ r: GHRecallMessage, id: UInt64, from s: HomeSession) {
        perform(.recall, r.channelID, r.messageUid, reason: r.reason, id: id, from: s)
    }
    func delete(_ r: GHDeleteMessage, id: UInt64, from s: HomeSession) {
        perform(.delete, r.channelID, r.messageUid, reason: r.reason, id: id, from: s)
    }

    func edit(_ r: GHEditMessage, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            let content = try r.body.domain()
            try Validation.message(content: content, mentions: [], clientID: "", maxBodyBytes: settings.maxBodyBytes, maxMentions: 0)
            perform(.edit(content), r.channelID, r.messageUid, id: id, from: s)
        }
    }

    func addReaction(_ r: GHAddReaction, id: UInt64, from s: HomeSession) { react(r.type, add: true, r.channelID, r.messageUid, id: id, from: s) }
    func removeReaction(_ r: GHRemoveReaction, id: UInt64, from s: HomeSession) {
        react(r.type, add: false, r.channelID, r.messageUid, id: id, from: s)
    }

    private func react(_ type: UInt32, add: Bool, _ channel: UInt64, _ uid: MessageUID, id: UInt64, from s: HomeSession) {
        guard (1...65_535).contains(type) else { return s.fail(id, .badRequest("reaction type must be 1 to 65535, not \(type)")) }
        if add, let c = directory.channel(channel), directory.canView(s.user, c) {
            do throws(Failure) { try moderation.requireNotTimedOut(s.user, in: c.serverID) } catch { return s.fail(id, error) }
        }
        perform(.react(type, add: add), channel, uid, id: id, from: s)
    }

    /// Who reacted with one type: for whoever may react to the message (docs/features.md "Quick comments").
    func listReactors(_ r: GHListReactors, id: UInt64, from s: HomeSession) {
        guard (1...65_535).contains(r.type) else { return s.fail(id, .badRequest("reaction type must be 1 to 65535, not \(r.type)")) }
        let limit = r.limit == 0 ? 20 : Int(r.limit)
        guard limit <= 100 else { return s.fail(id, Failure(.limitReached, "at most 100 reactors a page, not \(limit)")) }
        guard directory.channel(r.channelID) != nil || userHome.directs[r.channelID] != nil else {
            return s.fail(id, Self.notFound(r.messageUid))
        }
        read(.messages(uids: [r.messageUid])) { found in
            do throws(Failure) {
                guard found.error == nil else { throw Failure(.unavailable, "storage is unavailable; retry later") }
                guard let m = found.messages.first else { throw Self.notFound(r.messageUid) }
                _ = try self.place(of: m, asked: r.channelID, by: s)
                self.read(.reactors(message: m.uid, type: r.type, limit: limit)) { result in
                    guard result.error == nil else { return s.fail(id, Failure(.unavailable, "storage is unavailable; retry later")) }
                    var reactors = GHReactors()
                    reactors.userIds = result.users
                    reactors.total = UInt32(clamping: result.count)
                    s.respond(id, .reactors(reactors))
                }
            } catch {
                s.fail(id, error)
            }
        }
    }

    // MARK: The one path

    /// `reason`: for the audit log, when the operation removes another member's channel message.
    private func perform(_ op: Operation, _ channel: UInt64, _ uid: MessageUID, reason: String = "", id: UInt64, from s: HomeSession) {
        // Only the home of the channel (or conversation) acts; the others answer as for a message that is not there.
        guard directory.channel(channel) != nil || userHome.directs[channel] != nil else {
            return s.fail(id, Self.notFound(uid))
        }
        // Operations on one message take turns: each decides on the message as the one before left it.
        let turns = runner.turns, slot = ChangeSlot.message(uid)
        turns.run(slot) {
            self.read(.messages(uids: [uid], viewer: s.user)) { result in
                do throws(Failure) {
                    guard result.error == nil else { throw Failure(.unavailable, "storage is unavailable; retry later") }
                    guard let m = result.messages.first else { throw Self.notFound(uid) }
                    let place = try self.place(of: m, asked: channel, by: s)
                    guard let change = try self.decide(op, on: m, at: place, by: s) else {
                        s.respond(id, .message(self.shown(m, at: place, to: s.user)))
                        return turns.done(slot)
                    }
                    let audit = try self.audit(change, on: m, at: place, by: s, reason: reason)
                    self.carryOut(change, on: m, at: place, audit: audit, id: id, from: s, turn: slot)
                } catch {
                    s.fail(id, error)
                    turns.done(slot)
                }
            }
        }
    }

    static func notFound(_ uid: MessageUID) -> Failure { .notFound("message \(uid) not found") }

    /// Where `m` lives, if it is in the channel or conversation asked and the caller may reach it there.
    private func place(of m: MessageRecord, asked channel: UInt64, by s: HomeSession) throws(Failure) -> Place {
        guard m.channelID == channel else { throw Self.notFound(m.uid) }
        if m.serverID == 0 {
            guard let c = userHome.directs[channel], c.includes(s.user), !m.withheld || m.sender == s.user else { throw Self.notFound(m.uid) }
            return .direct(c)
        }
        guard let c = directory.channel(channel) else { throw Self.notFound(m.uid) }
        if s.guestOf.contains(c.serverID), directory.guestVisible(c) { throw Failure.forbidden("guests are read-only in server \(c.serverID)") }
        guard directory.canView(s.user, c) else { throw Self.notFound(m.uid) }
        return .channel(c)
    }

    /// A decided change: what to write, the message after it, and how the update reads.
    struct Change {
        let write: StoreWrite
        let after: MessageRecord
        let kind: GHMessageUpdateKind
        var reactionType: UInt32 = 0
    }

    /// The change `op` makes to `m`, nil when it changes nothing (a repeated reaction), or why it may not.
    private func decide(_ op: Operation, on m: MessageRecord, at place: Place, by s: HomeSession) throws(Failure) -> Change? {
        if let gone = m.changes.removal {
            throw Failure.conflict("message \(m.uid) was \(gone.kind == .recalled ? "recalled" : "deleted")")
        }
        let now = now()
        var after = m
        switch op {
        case .recall:
            let windowMs = UInt64(settings.recallWindowSeconds) * 1000
            let ownInTime = m.sender == s.user && now <= m.sentTime + windowMs
            if !ownInTime, !(try holds(.recallOthers, at: place, s)) {
                throw m.sender == s.user
                    ? Failure.forbidden("message \(m.uid) is older than the recall window (\(settings.recallWindowSeconds) s)")
                    : Failure.forbidden("only the sender may recall message \(m.uid) (or a member with the recall permission)")
            }
            return removed(m, .recalled, by: s.user, now: now)
        case .delete:
            if m.sender != s.user, !(try holds(.deleteOthers, at: place, s)) {
                throw Failure.forbidden("only the sender may delete message \(m.uid) (or a member with the delete permission)")
            }
            return removed(m, .deleted, by: s.user, now: now)
        case .edit(let content):
            guard m.sender == s.user else { throw Failure.forbidden("only the sender may edit message \(m.uid)") }
            after.content = content
            after.changes.editedTime = now
            after.changes.editCount += 1
            return Change(write: .messageEdited(m.uid, content, time: now, channel: m.channelID), after: after, kind: .editedMessage)
        case .react(let type, let add):
            var counts = m.changes.reactions
            let i = counts.firstIndex { $0.type == type }
            let mine = i.map { counts[$0].mine } ?? false
            guard add != mine else { return nil }
            if add {
                if i == nil, counts.count >= settings.reactionTypesPerMessage {
                    throw Failure(.limitReached, "message \(m.uid) has \(counts.count) reaction types, the most a message may have")
                }
                let own = counts.filter(\.mine).count
                guard own < settings.reactionsPerUserPerMessage else {
                    throw Failure(.limitReached, "at most \(settings.reactionsPerUserPerMessage) reactions per user on one message")
                }
                if let i { counts[i].count += 1; counts[i].mine = true } else {
                    counts.append(ReactionCount(type: type, count: 1, mine: true))
                    counts.sort { $0.type < $1.type }
                }
            } else if let i {
                counts[i].count -= 1
                counts[i].mine = false
                if counts[i].count == 0 { counts.remove(at: i) }
            }
            after.changes.reactions = counts
            return Change(write: .reaction(m.uid, user: s.user, type: type, added: add, time: now, channel: m.channelID), after: after,
                          kind: add ? .reactionAdded : .reactionRemoved, reactionType: type)
        }
    }

    /// A removal of another member's channel message is audited (it was made with RECALL_OTHERS or DELETE_OTHERS).
    private func audit(_ change: Change, on m: MessageRecord, at place: Place, by s: HomeSession, reason: String) throws(Failure) -> [StoreWrite] {
        guard case .channel(let c) = place, m.sender != s.user, change.after.changes.removal != nil else { return [] }
        var sender = AuditDiff()
        sender.field("sender", m.sender, nil)
        return [try auditTrail.entry(change.kind == .recalledMessage ? .messageRecalled : .messageDeleted, in: c.serverID, by: s.user,
                                          target: "\(m.uid)", channel: c.id, changes: sender.changes, reason: reason)]
    }

    private func holds(_ p: Permission, at place: Place, _ s: HomeSession) throws(Failure) -> Bool {
        guard case .channel(let c) = place else { return false }
        return directory.permissions(of: s.user, in: c.serverID, channel: c.id)?.contains(p) == true
    }

    private func removed(_ m: MessageRecord, _ kind: RemovalKind, by user: UserID, now: UInt64) -> Change {
        var after = m
        let removal = Removal(kind: kind, by: user, time: now)
        after.changes.removal = removal
        after.content = .text("")
        after.mentions = []
        after.mentionAll = false
        after.changes.reactions = []
        after.attachments = []
        return Change(write: .messageRemoved(m.uid, removal, channel: m.channelID), after: after, kind: kind == .recalled ? .recalledMessage : .deletedMessage)
    }

    // MARK: Carrying it out

    private func carryOut(_ change: Change, on m: MessageRecord, at place: Place, audit: [StoreWrite], id: UInt64, from s: HomeSession,
                          turn: ChangeSlot) {
        var update = GHMessageUpdate()
        update.kind = change.kind
        update.message = GHChannelMessage(change.after)
        for i in update.message.reactions.indices { update.message.reactions[i].mine = false }
        update.actorID = s.user
        update.time = now()
        update.reactionType = change.reactionType
        let copy = EventCopy(.messageUpdate(update))
        // An update made for one user: the message's files with that user's links (the shared copy has none).
        func copyFor(_ user: UserID) -> EventCopy {
            guard !change.after.attachments.isEmpty else { return copy }
            var own = update
            own.message.attachments = services.filesShown(change.after, to: user)
            return EventCopy(.messageUpdate(own))
        }
        let isRemoval = change.after.changes.removal != nil
        // A removed message's files: every link made for them stops working once the removal is stored.
        var effects = Effects(writes: [change.write] + audit, followUps: [.messageOperated(removedFiles: isRemoval ? m.attachments : [])])
        effects.turn = turn
        switch place {
        case .channel(let c):
            // Who the message was addressed to hears of the change in their inbox too (offline sync).
            let mentioned = Array(Set(m.mentions).subtracting([s.user])).filter { directory.canView($0, c) }.sorted()
            effects.addressed = mentioned.map { AddressedItem(user: $0, stored: .event(copyFor($0)), live: .elsewhere) }
            // A removed message leaves the channel's pins with it.
            let unpins = isRemoval && pinboard.pins.isPinned(m.uid, in: c.id)
            if unpins {
                effects.writes.append(.unpinned(c.id, m.uid))
                effects.notices.append(pinboard.notice(m.uid, pinned: false, in: c, by: ""))
            }
            effects.changes = [.messageChanged(ChangedMessage(before: m, after: change.after, update: update, place: place, unpins: unpins,
                                                              mentioned: mentioned, id: id, actor: s))]
        case .direct(let conversation):
            // Withheld from the peer: only its sender's devices hear of a change.
            if isRemoval, !m.withheld, var c = userHome.directs[conversation.id] {
                // The others' unread counts leave it out once stored; their sides are stored with the removal.
                effects.writes += c.removed(by: m.sender, sentTime: m.sentTime).map { .directSide(conversation: c.id, $0) }
            }
            effects.addressed = m.withheld ? [] : conversation.others(of: s.user).map { user in
                let own = copyFor(user)
                return AddressedItem(user: user, stored: .event(own), live: .push(own))
            }
            effects.changes = [.messageChanged(ChangedMessage(before: m, after: change.after, update: update, place: place, unpins: false,
                                                              mentioned: [], id: id, actor: s))]
            // The actor's other devices see it too.
            effects.deliveries = [Delivery(.otherSessions(of: s.user, except: s.key), copyFor(s.user))]
        }
        runner.carryOut(effects, answering: id, to: s)
    }

    /// A change is stored: the message's channel or conversation takes it, the
    /// actor is answered, then a channel's recipients hear of it (a
    /// conversation's hear through their addressed items).
    func changed(_ c: ChangedMessage, ords: [UInt64]) {
        let m = c.before
        switch c.place {
        case .channel(let channel):
            if c.isRemoval { directory.messageRemoved(channel.id, seq: m.seq) }
            if c.unpins { pinboard.unpinned(m.uid, in: channel.id) }
            c.actor.respond(c.id, .message(shown(c.after, at: c.place, to: c.actor.user)))
            var cursors: [UserID: UInt64] = [:]
            for (user, ord) in zip(c.mentioned, ords) { cursors[user] = ord }
            if let last = cursors.values.max() { runner.inboxDelivered(upTo: last) }
            let encoded = (try? c.update.serializedBytes()) ?? []
            fanOutUpdate(c.after, encoded, c.actor, cursors, c.isRemoval)
        case .direct(let conversation):
            if c.isRemoval, !m.withheld { userHome.messageRemoved(from: conversation.id, sender: m.sender, sentTime: m.sentTime) }
            c.actor.respond(c.id, .message(shown(c.after, at: c.place, to: c.actor.user)))
        }
    }

    /// The message as `user` sees it in an answer.
    private func shown(_ m: MessageRecord, at place: Place, to user: UserID) -> GHChannelMessage {
        switch place {
        case .channel: services.withFiles(groupReceipts.withReceipts([GHChannelMessage(m)], for: user)[0], m, to: user)
        case .direct: userHome.directMessage(m, for: user)
        }
    }
}

// MARK: Replies and threads

extension MessageOperations {
    /// Reads what a send refers to and hands on what it found, or answers why
    /// it may not refer to it: a reply's message must be in the same channel
    /// or conversation and not removed; a thread's root too, and not itself in a thread.
    func references(_ replyTo: MessageUID, _ root: MessageUID, in channel: UInt64, id: UInt64, for s: HomeSession,
                    then: @escaping (References) -> Void) {
        read(.messages(uids: [replyTo, root].filter { $0 != 0 })) { result in
            do throws(Failure) {
                guard result.error == nil else { throw Failure(.unavailable, "storage is unavailable; the message was not sent, retry later") }
                var found = References()
                for (uid, isRoot) in [(replyTo, false), (root, true)] where uid != 0 {
                    guard let m = result.messages.first(where: { $0.uid == uid }), m.channelID == channel else { throw Self.notFound(uid) }
                    if m.changes.removal != nil { throw Failure.conflict("message \(uid) was removed; it cannot be replied to") }
                    if isRoot {
                        guard m.threadRoot == 0 else {
                            throw Failure.badRequest("message \(uid) is in the thread of \(m.threadRoot); a thread joins its root")
                        }
                        found.threadRoot = uid
                    } else {
                        found.reply = ReplyRef(of: m)
                    }
                }
                then(found)
            } catch {
                s.fail(id, error)
            }
        }
    }
}

extension MessageRecord {
    /// Takes on what the send refers to; a thread's root counts one more reply in the same commit.
    mutating func refer(_ refs: References, writes: inout [StoreWrite]) {
        reply = refs.reply
        threadRoot = refs.threadRoot
        if threadRoot != 0 { writes.append(.threadReply(root: threadRoot, time: sentTime, channel: channelID)) }
    }
}
