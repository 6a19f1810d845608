// Read positions and unread info (README "What clients receive"): mark read, unread queries,
// and the coalesced unread events sent once per session per loop turn.
// Loop thread only.

import GuildhallCore
import GuildhallStore
import GuildhallWire

extension GHUnreadInfo {
    init(_ u: UnreadState) {
        self.init()
        serverID = u.serverID
        channelID = u.channelID
        unreadCount = u.unreadCount
        maxCount = u.maxCount
        mentionedCount = u.mentionedCount
        ackTimestamp = u.ackTimestamp
        lastMsgTime = u.lastMsgTime
        lastSeq = u.lastSeq
        readSeq = u.readSeq
    }
}

/// Reading: mark-read, unread queries, the coalesced unread events, and writing moved read positions.
final class Reading: HomePart {
    unowned let services: HomeServices
    /// A moved position is told to the gateways' halves of the interest; it is a channel's activity for auto-subscribe.
    private unowned let interest: InterestFeed
    private unowned let subscriptions: Subscriptions
    /// Sync cursors are written with the positions.
    private unowned let offlineDelivery: OfflineDelivery

    init(services: HomeServices, interest: InterestFeed, subscriptions: Subscriptions, offlineDelivery: OfflineDelivery) {
        self.services = services
        self.interest = interest
        self.subscriptions = subscriptions
        self.offlineDelivery = offlineDelivery
    }
}

extension Reading {
    /// A mark-read, once stored (`StateChange.readMarked`): the position
    /// moves, and the user's other sessions (`origin` marked it) hear of it.
    func marked(_ user: UserID, _ channel: ChannelID, upTo seq: UInt64, now: UInt64, origin: SessionKey) {
        let before = positions.readUp(user, channel, to: seq, now: now, written: true)
        if let server = directory.serverID(ofChannel: channel) { interest.positionMoved(user, channel, in: server) }
        subscriptions.touchActivity(user, channel, now: now, alreadyRecorded: true)
        readMoved(user, channel, except: origin)
        if seq > before { owe(received: .upTo(seq, in: channel, read: true), of: user, except: origin) }
    }

    func markRead(_ r: GHMarkRead, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            if s.guestOf.contains(directory.serverID(ofChannel: r.channelID) ?? 0) {
                throw Failure.forbidden("guests have no read positions")
            }
            let c = try directory.seen(by: s.user).channel(r.channelID)
            if r.time != 0 {
                // By time: the last seq sent at or before it is read first, then it is a mark by seq.
                return read(.seqAtTime(channel: c.id, time: r.time)) { result in
                    guard result.error == nil else { return s.fail(id, Failure(.unavailable, "storage is unavailable; retry later")) }
                    var bySeq = r
                    bySeq.time = 0
                    bySeq.seq = result.count
                    if result.count == 0 { return s.respond(id, .unread(GHUnreadInfo(self.services.unread(s.user, c, now: self.now())))) }
                    self.markRead(bySeq, id: id, from: s)
                }
            }
            let now = now()
            let seq = r.seq == 0 ? c.lastSeq : min(r.seq, c.lastSeq)
            // Decided now, applied once stored: a mark the store refused moves nothing.
            // The stored row never goes back (a later mark that committed first stays).
            let position = positions.positionAfterReading(s.user, c.id, upTo: seq, now: now)
            // The inbox row carries the move to the user's devices that are offline (docs/features.md).
            var moved = GHUnreadInfo()
            moved.serverID = c.serverID
            moved.channelID = c.id
            moved.readSeq = position.readSeq
            moved.ackTimestamp = position.ackTime
            // The other sessions get unread events instead (`readMoved`).
            let item = AddressedItem(user: s.user, stored: .event(EventCopy(.unreadChanged(moved))), live: .noted)
            var e = Effects(writes: [.readPosition(s.user, c.id, position)], addressed: [item],
                            reply: .read(.unread(s.user, c, now: now)))
            e.changes = [.readMarked(s.user, c.id, seq: seq, time: now, origin: s.key)]
            runner.carryOut(e, answering: id, to: s)
        }
    }

    /// Tells the user's other sessions that a read position moved.
    func readMoved(_ user: UserID, _ channel: ChannelID, except: SessionKey?) {
        for other in registry.sessions(of: user).values where other.key != except {
            let level = book.level(of: other.key, in: channel)
            other.owe(level == .unreadStatus ? .status : .info, channel)
        }
    }

    func getUnread(_ r: GHGetUnread, id: UInt64, from s: HomeSession) {
        guard r.channelIds.count <= Limits.maxIdsPerRequest else {
            s.fail(id, Failure(.limitReached, "at most \(Limits.maxIdsPerRequest) channels per request"))
            return
        }
        let now = now()
        var list = GHUnreadList()
        list.unreads = r.channelIds.compactMap { try? directory.seen(by: s.user).channel($0) }.map { GHUnreadInfo(services.unread(s.user, $0, now: now)) }
        s.respond(id, .unreads(list))
    }

    /// Turns a session's owed unread notices into events (at flush time, so
    /// several messages in one turn make one event with the latest value).
    func emitUnread(_ s: HomeSession) {
        guard !s.pendingUnread.isEmpty else { return }
        let owed = s.pendingUnread
        s.pendingUnread.removeAll()
        let now = now()
        for (channel, notice) in owed.sorted(by: { $0.key < $1.key }) {
            guard let c = directory.channel(channel), directory.canView(s.user, c) else { continue }
            let u = services.unread(s.user, c, now: now)
            switch notice {
            case .info:
                s.push(event: GHEvent.OneOf_Body.unreadChanged(GHUnreadInfo(u)).sharedPayload)
            case .status:
                guard s.sentUnreadStatus[channel] != u.hasUnread else { continue }
                s.sentUnreadStatus[channel] = u.hasUnread
                var status = GHUnreadStatus()
                status.serverID = c.serverID
                status.channelID = c.id
                status.unread = u.hasUnread
                s.push(event: GHEvent.OneOf_Body.unreadStatus(status).sharedPayload)
            }
        }
    }

    /// Writes read positions moved implicitly (senders), in one job.
    func flushPositions() {
        offlineDelivery.flushCursors()
        let moved = positions.takeDirty()
        let received = positions.takeDirtyReceived()
        guard !moved.isEmpty || !received.isEmpty else { runner.submitTurnJobs(); return }
        let writes: [StoreWrite] = moved.map { .readPosition($0.0.user, $0.0.channel, $0.1) }
            + received.map { .receivedSeq($0.0.user, $0.0.channel, $0.1) }
        commit(writes, from: nil) { error in
            guard let error else { return }
            // Written again with the next flush.
            self.log.error("read positions not saved; retrying", ["count": moved.count, "error": error.description])
            self.positions.unwritten(moved.map(\.0), received: received.map(\.0))
        }
        // Called from a timer: the loop may block in poll before its check
        // phase, so hand the job over now.
        runner.submitTurnJobs()
    }
}
