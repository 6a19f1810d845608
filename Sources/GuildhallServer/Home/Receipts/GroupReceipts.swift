// Group read receipts on channel messages (docs/features.md): requests (at send
// or later, by the sender only), responses that move a member's receipt
// cursor, coalesced responses to the requester, reader pages and the
// receipt info each message carries. Requests and responses are items
// addressed to users: written to their inboxes with the change, so offline
// devices get them in their sync. Loop thread only.

import GuildhallCore
import GuildhallLoop
import GuildhallStore
import GuildhallWire

/// New readers owed to one requester, sent once per loop turn.
struct OwedResponses {
    var byMessage: [MessageUID: GHReceiptResponse] = [:]
    /// The highest inbox ord among the rows these came from.
    var ord: UInt64 = 0
}

/// A receipt request ready to commit with the items addressed to members.
struct ReceiptRequestPlan {
    let channel: ChannelID
    let request: ChannelReceipts.Request
    let addressed: [AddressedItem]

    var write: StoreWrite { .receiptRequest(channel, request) }
}

/// Group read receipts of the home's channels: requests, readers, and the responses owed to requesters this turn.
final class GroupReceipts: HomePart {
    unowned let services: HomeServices
    var receipts = ReceiptBook()
    /// Requests being committed.
    var requestsInFlight: Set<MessageUID> = []
    var owedResponses: [UserID: OwedResponses] = [:]

    init(services: HomeServices) { self.services = services }
}

extension GroupReceipts {
    var receiptWindowMs: UInt64 { UInt64(settings.receiptWindowSeconds) * 1000 }

    /// Whether `user` may ask for receipts in `server` now; throws why not.
    func checkReceiptsAllowed(in server: ServerID, by user: UserID) throws(Failure) {
        let members = directory.memberCount(server)
        guard members <= settings.receiptMaxMembers else {
            throw Failure(.limitReached, "read receipts are only available in servers of at most \(settings.receiptMaxMembers) members; this one has \(members)")
        }
        if settings.receiptRequesters == "admins", directory.permissions(of: user, in: server)?.contains(.manageServer) != true {
            throw Failure.forbidden("only members who manage the server may ask for read receipts in this deployment")
        }
    }

    /// The write and items of a new request: one item addressed to each
    /// member who may read the channel, except the requester.
    func receiptRequestPlan(_ m: MessageRecord) -> ReceiptRequestPlan {
        var event = GHReceiptRequest()
        event.conversationType = .channel
        event.serverID = m.serverID
        event.channelID = m.channelID
        event.messageUid = m.uid
        event.seq = m.seq
        event.requesterID = m.sender
        let copy = EventCopy(.receiptRequest(event))
        let readers = directory.channel(m.channelID).map(directory.readers(of:)) ?? []
        return ReceiptRequestPlan(channel: m.channelID,
                                  request: ChannelReceipts.Request(uid: m.uid, seq: m.seq, requester: m.sender, sentTime: m.sentTime),
                                  addressed: readers.filter { $0 != m.sender }.map { AddressedItem.event(copy, to: $0) })
    }

    // MARK: Requests

    /// Only the sender may ask, even again (403; 404 for whoever may not see the message), so the message is read first.
    func requestReceipt(_ r: GHRequestReceipt, id: UInt64, from s: HomeSession) {
        read(.messages(uids: [r.messageUid])) { [self] result in
            attempt(id, s) { () throws(Failure) in
                guard result.error == nil else { throw Failure(.unavailable, "storage is unavailable; retry later") }
                guard let m = result.messages.first, m.serverID != 0, let c = directory.channel(m.channelID), directory.canView(s.user, c) else {
                    throw Failure.notFound("message \(r.messageUid) not found")
                }
                guard m.sender == s.user else { throw Failure.forbidden("only the sender of message \(m.uid) may ask for read receipts on it") }
                if m.changes.removal != nil { throw Failure.conflict("message \(m.uid) was removed: it takes no receipt request") }
                try services.requirePermission(.requestReceipts, at: .channel(c.id), for: s)
                if receipts.isRequested(m.uid) || requestsInFlight.contains(m.uid) {
                    answerReceipts([m.uid], id: id, to: s)
                    return
                }
                try checkReceiptsAllowed(in: m.serverID, by: s.user)
                let now = now()
                guard m.sentTime + receiptWindowMs >= now else {
                    throw Failure.forbidden("message \(m.uid) is older than the receipt window (\(settings.receiptWindowSeconds) s)")
                }
                let plan = receiptRequestPlan(m)
                requestsInFlight.insert(m.uid)
                var effects = Effects(writes: [plan.write], addressed: plan.addressed, reply: .read(.receipts([m.uid], for: s.user)))
                effects.failure = "storage is unavailable; the request was not saved, retry later"
                effects.changes = [.receiptRequested(plan, uid: m.uid)]
                runner.carryOut(effects, answering: id, to: s)
            }
        }
    }

    // MARK: Responses

    func respondReceipts(_ r: GHRespondReceipts, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            guard !r.messageUids.isEmpty, r.messageUids.count <= Limits.maxIdsPerRequest else {
                throw Failure(.limitReached, "between 1 and \(Limits.maxIdsPerRequest) message UIDs per response")
            }
            let channel = try respondingChannel(r.channelID, for: s)
            read(.messages(uids: r.messageUids)) { [self] result in
                change(.receiptResponses(s.user), id: id, from: s) { [self] settle throws(Failure) in
                    guard result.error == nil else { throw Failure(.unavailable, "storage is unavailable; retry later") }
                    _ = try respondingChannel(channel.id, for: s)
                    settle(try recordResponse(result.messages, asked: r.messageUids, in: channel, id: id, from: s))
                }
            }
        }
    }

    /// The channel, if the session's user may respond to receipts in it.
    private func respondingChannel(_ id: ChannelID, for s: HomeSession) throws(Failure) -> ChannelRecord {
        guard let c = directory.channel(id), directory.canView(s.user, c) else {
            if let c = directory.channel(id), s.guestOf.contains(c.serverID), directory.guestVisible(c) {
                throw Failure.forbidden("guests cannot respond to read receipts")
            }
            throw Failure.notFound("channel \(id) not found")
        }
        return c
    }

    /// The effects of a response: the cursor's advance, stored, then taken; nil when it answered itself (nothing new).
    private func recordResponse(_ found: [MessageRecord], asked: [MessageUID], in channel: ChannelRecord, id: UInt64,
                                from s: HomeSession) throws(Failure) -> Effects? {
        var byUID: [MessageUID: MessageRecord] = [:]
        for m in found { byUID[m.uid] = m }
        for uid in asked {
            // A message of a channel the caller may not view is answered as one that does not exist.
            guard let m = byUID[uid], directory.channel(m.channelID).map({ directory.canView(s.user, $0) }) == true else {
                throw Failure.notFound("message \(uid) not found")
            }
            guard m.channelID == channel.id else {
                throw Failure.badRequest("message \(uid) belongs to channel \(m.channelID), not \(channel.id): one response holds messages of one channel")
            }
            if m.changes.removal != nil { throw Failure.conflict("message \(uid) was removed: it takes no more receipt responses") }
        }
        let now = now()
        let cutoff = now >= receiptWindowMs ? now - receiptWindowMs : 0
        let floor = receipts.channel(channel.id)?.closedSeq(sentBefore: cutoff) ?? 0
        let target = found.filter { $0.sentTime >= cutoff }.map(\.seq).max() ?? 0
        guard let advance = receipts.responding(s.user, in: channel.id, upTo: target, floor: floor, at: now) else {
            answerReceipts(asked, id: id, to: s)  // nothing new: a no-op
            return nil
        }
        // Each requester of a covered message gets the new reader, counted with the others.
        var perRequester: [UserID: [GHReceiptResponse]] = [:]
        let book = receipts.channel(channel.id)
        for req in book?.requests(after: advance.from, through: advance.to) ?? [] where req.requester != s.user {
            var response = GHReceiptResponse()
            response.conversationType = .channel
            response.serverID = channel.serverID
            response.channelID = channel.id
            response.messageUid = req.uid
            response.readers = [s.user: now]
            response.readerCount = UInt32(book!.readerCount(of: req.seq) + 1)
            perRequester[req.requester, default: []].append(response)
        }
        // Live, they are coalesced per requester per turn (`sendOwedResponses`).
        let owed = Array(perRequester)
        let items = owed.map { requester, responses in
            var list = GHReceiptResponses()
            list.responses = responses
            return AddressedItem(user: requester, stored: .event(EventCopy(.receiptResponse(list))), live: .elsewhere)
        }
        var effects = Effects(writes: [.receiptAdvance(channel.id, advance)], addressed: items, reply: .read(.receipts(asked, for: s.user)))
        effects.changes = [.receiptsAdvanced(channel.id, advance, owed: owed)]
        effects.failure = "storage is unavailable; the response was not saved, retry later"
        return effects
    }

    /// A receipt request, once stored (`StateChange.receiptRequested`).
    func requested(_ plan: ReceiptRequestPlan, uid: MessageUID) {
        requestsInFlight.remove(uid)
        receipts.addRequest(plan.request, in: plan.channel)
        services.metrics.receiptRequests.increment()
    }

    /// A receipt request whose commit failed: the message may be asked again.
    func notRequested(_ uid: MessageUID) { requestsInFlight.remove(uid) }

    /// A member's responses, once stored (`StateChange.receiptsAdvanced`): the
    /// readers, then each requester's responses with its item's inbox `ords`.
    func advanced(_ advance: ChannelReceipts.Advance, in channel: ChannelID, owed: [(UserID, [GHReceiptResponse])], ords: [UInt64]) {
        receipts.load(advance, in: channel)
        services.metrics.receiptResponses.increment()
        for ((requester, responses), ord) in zip(owed, ords) { owe(responses, to: requester, ord: ord) }
    }

    /// Queues new readers for the requester's sessions; `sendOwedResponses` merges them once per turn.
    private func owe(_ responses: [GHReceiptResponse], to requester: UserID, ord: UInt64) {
        var o = owedResponses[requester] ?? OwedResponses()
        for r in responses {
            if var merged = o.byMessage[r.messageUid] {
                merged.readers.merge(r.readers) { old, _ in old }
                merged.readerCount = max(merged.readerCount, r.readerCount)
                o.byMessage[r.messageUid] = merged
            } else {
                o.byMessage[r.messageUid] = r
            }
        }
        o.ord = max(o.ord, ord)
        owedResponses[requester] = o
    }

    /// Once per loop turn: one coalesced response event per requester. The
    /// event carries no inbox cursor (it merges several rows); its inbox
    /// position is noted so acknowledging it moves the device's cursor past them.
    func sendOwedResponses() {
        guard !owedResponses.isEmpty else { return }
        let owed = owedResponses
        owedResponses.removeAll()
        for (requester, o) in owed {
            runner.inboxDelivered(upTo: o.ord)
            var list = GHReceiptResponses()
            list.responses = o.byMessage.values.sorted { $0.messageUid < $1.messageUid }
            let payload = GHEvent.OneOf_Body.receiptResponse(list).sharedPayload
            for s in registry.sessions(of: requester).values {
                s.noteInboxItem(o.ord)
                s.push(event: payload)
            }
        }
    }

    // MARK: Readers and info

    func getReceiptReaders(_ r: GHGetReceiptReaders, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            guard let place = receipts.place(of: r.messageUid), let book = receipts.channel(place.channel),
                  let request = book.request(at: place.seq), let c = directory.channel(place.channel), directory.canView(s.user, c) else {
                throw Failure.notFound("no read receipt was requested for message \(r.messageUid)")
            }
            guard request.requester == s.user else { throw Failure.forbidden("only the requester can list the readers of message \(r.messageUid)") }
            let limit = r.limit == 0 ? Limits.maxPageSize : Int(r.limit)
            guard limit <= Limits.maxPageSize else { throw Failure(.limitReached, "page size \(limit) is over the limit of \(Limits.maxPageSize)") }
            let (page, next) = book.readers(of: place.seq, after: r.cursor == 0 ? nil : r.cursor, limit: limit)
            var out = GHReceiptReaders()
            out.messageUid = r.messageUid
            out.readers = page.map { reader in
                var g = GHReader()
                g.userID = reader.user
                g.readTime = reader.time
                return g
            }
            out.total = UInt32(book.readerCount(of: place.seq))
            out.nextCursor = next ?? 0
            s.respond(id, .readers(out))
        }
    }

    func getReceiptInfo(_ r: GHGetReceiptInfo, id: UInt64, from s: HomeSession) {
        guard r.messageUids.count <= Limits.maxIdsPerRequest else {
            s.fail(id, Failure(.limitReached, "at most \(Limits.maxIdsPerRequest) message UIDs per request"))
            return
        }
        answerReceipts(r.messageUids, id: id, to: s)
    }

    private func answerReceipts(_ uids: [MessageUID], id: UInt64, to s: HomeSession) {
        s.respond(id, receipts(uids, for: s.user))
    }

    /// The receipt infos of `uids` as `user` sees them: an answer.
    func receipts(_ uids: [MessageUID], for user: UserID) -> GHResponse.OneOf_Result {
        var list = GHReceiptInfoList()
        list.receipts = uids.map { receiptInfo($0, for: user) }
        return .receipts(list)
    }

    /// A message's receipt info as `user` sees it (requested = false for a
    /// message without a request, or in a channel the user cannot read).
    func receiptInfo(_ uid: MessageUID, for user: UserID) -> GHReceiptInfo {
        var info = GHReceiptInfo()
        info.messageUid = uid
        guard let place = receipts.place(of: uid), let book = receipts.channel(place.channel), let request = book.request(at: place.seq),
              let channel = directory.channel(place.channel), directory.canView(user, channel) else { return info }
        info.requested = true
        info.removed = channel.removed.contains(place.seq)
        let visible = settings.receiptCountVisibility == "all" || request.requester == user
        info.readerCount = visible ? UInt32(book.readerCount(of: place.seq)) : 0
        info.countHidden = !visible
        info.responded = book.hasRead(user, place.seq)
        info.closed = request.sentTime + receiptWindowMs < now()
        info.memberCount = UInt32(directory.readerCount(of: channel))
        return info
    }

    /// Messages of an answer with their receipt info for `user`.
    func withReceipts(_ messages: [GHChannelMessage], for user: UserID) -> [GHChannelMessage] {
        messages.map { m in
            guard m.needReceipt || receipts.isRequested(m.uid) else { return m }
            var out = m
            out.receipt = receiptInfo(m.uid, for: user)
            return out
        }
    }
}
