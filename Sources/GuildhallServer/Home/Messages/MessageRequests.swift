// Channel messages: send (durable before acknowledged and fanned out), and
// what a session may see of them (`readableChannel`, `shown`); history pages,
// threads and lookups by UID are `MessageReads`'. Loop thread only.

import GuildhallCore
import GuildhallStore
import GuildhallWire

/// A channel message handed to the store, as its commit settles it (`StateChange.messageSent`).
/// A class: the runner hands the state change on by reference, not by copying the record in it.
final class SentMessage {
    let record: MessageRecord
    /// The send's request id and session, answered once stored.
    let id: UInt64
    let sender: HomeSession
    /// Its projected fan-out, counted against the publisher until it is queued (PublisherPause.swift).
    let projectedBytes: Int
    /// The users its mentions are addressed to, in the order of the effects' addressed items.
    let mentioned: [UserID]
    let receiptPlan: ReceiptRequestPlan?
    /// The files it claimed (Attachments.swift).
    let attachmentIDs: [UInt64]

    init(record: MessageRecord, id: UInt64, sender: HomeSession, projectedBytes: Int, mentioned: [UserID], receiptPlan: ReceiptRequestPlan?,
         attachmentIDs: [UInt64]) {
        self.record = record
        self.id = id
        self.sender = sender
        self.projectedBytes = projectedBytes
        self.mentioned = mentioned
        self.receiptPlan = receiptPlan
        self.attachmentIDs = attachmentIDs
    }
}

extension Home {
    /// The 503's message when a send's commit fails (its resends waiting on it get it too).
    static let sendFailure = "storage is unavailable; the message was not sent, retry later"

    /// `checkResend`: false once the client id was found to be new after all (see `answeredAsResend`).
    func sendMessage(_ r: SendRequest, id: UInt64, from s: HomeSession, checkResend: Bool = true) {
        // Files claimed for this send are let go if it is refused before it is carried out.
        var carriedOut = false
        defer { if r.files != nil, !carriedOut { attachments.release(r.attachmentIDs) } }
        attempt(id, s) { () throws(Failure) in
            guard let content = r.content else { throw Failure.badRequest("message body must hold text or custom content") }
            try Validation.message(content: content, mentions: r.mentions, clientID: r.clientID, maxBodyBytes: settings.maxBodyBytes,
                                   maxMentions: settings.maxMentions, files: r.attachmentIDs, maxFiles: settings.filesPerMessage)
            // (The closure is only made for sends with a client id: it costs an allocation.)
            if checkResend, !r.clientID.isEmpty, services.answeredAsResend(r.clientID, id: id, from: s, as: { self.services.withFiles(GHChannelMessage($0), $0, to: s.user) },
                                             otherwise: { self.sendMessage(r, id: id, from: s, checkResend: false) }) { return }
            if r.retried {
                // Its guild's earlier home may have stored it before it went: then that is the answer.
                return runner.read(.messages(uids: [r.uid])) { found in
                    if found.error != nil { return s.fail(id, Failure(.unavailable, "storage is unavailable; retry later")) }
                    if let m = found.messages.first, m.sender == s.user, m.channelID == r.channelID {
                        return s.respond(answering: id, message: m.encoded(for: s.user, self))
                    }
                    var fresh = r
                    fresh.retried = false
                    self.sendMessage(fresh, id: id, from: s, checkResend: false)
                }
            }
            let now = now()
            // Read once, first; the permission check answers 404 for a channel the
            // sender may not view, as for one that does not exist.
            guard let channel = directory.channel(r.channelID) else { throw Directory.channelNotFound(r.channelID) }
            if r.webhook == nil { try services.requirePermission(r.permissionsNeeded, in: channel, for: s) }
            if r.webhook == nil { try moderation.requireMaySend(s.user, in: channel, at: now) }
            if r.needReceipt { try groupReceipts.checkReceiptsAllowed(in: channel.serverID, by: s.user) }
            if r.references == nil, r.replyTo != 0 || r.threadRoot != 0 {
                // The messages it refers to are read first; then the send goes on as any other.
                return messageOperations.references(r.replyTo, r.threadRoot, in: r.channelID, id: id, for: s) { found in
                    var resolved = r
                    resolved.references = found
                    self.sendMessage(resolved, id: id, from: s, checkResend: false)
                }
            }
            if !r.attachmentIDs.isEmpty, r.files == nil {
                // Checked and claimed last: nothing after this waits, so the send is stored or refused at once.
                return attachments.resolve(r.attachmentIDs, serverID: channel.serverID, channelID: channel.id, id: id, for: s) { files in
                    var resolved = r
                    resolved.files = files
                    self.sendMessage(resolved, id: id, from: s, checkResend: false)
                }
            }
            var effects = Effects()
            store(r, content, in: channel, audience: audienceSize(channel), queued: publishers.queuedBytes, id: id, from: s, now: now, into: &effects)
            runner.carryOut(effects, to: s)
            carriedOut = true
        }
    }

    /// Sends of one session, in the order read (SendRun.swift). They are
    /// handled in this one call, so nothing else changes who may send where
    /// between them: a plain send's channel, permission, timeout and
    /// audience are looked up once per channel, not once per send, and the
    /// plain sends stored one after another commit as one job. The others
    /// take `sendMessage`'s whole path. Returns those not handled
    /// because the session was paused meanwhile (its publisher's fan-out or
    /// the store queue): the reception holds them until it is read again.
    func sendRun(_ sends: ArraySlice<PendingSend>, from s: HomeSession) -> ArraySlice<PendingSend> {
        var cleared: (channel: ChannelRecord, audience: Int)?
        // Plain sends stored and not yet carried out; any other send waits
        // until they are, so that jobs, and fan-outs, keep the order of seqs.
        var stored = Effects()
        // Room for the whole run at once: grown by doubling, the two arrays were copied six times over a run of 64.
        stored.writes.reserveCapacity(sends.count)
        stored.changes.reserveCapacity(sends.count)
        // Nothing is written to the loops' sessions while the run is handled,
        // and its sends were read at one instant: read once.
        let queued = publishers.queuedBytes, now = now()
        // By index: each send is read where it lies, not copied out (about 200 bytes, each reference retained).
        var i = sends.startIndex
        while i < sends.endIndex, s.readPauses.isEmpty {
            defer { i += 1 }
            let id = sends[i].id, plain = sends[i].request.isPlain
            if plain, cleared?.channel.id != sends[i].request.channelID { cleared = clearance(sends[i].request.channelID, for: s, at: now) }
            // Not plain, or refused (the whole path says why): what was stored goes first.
            guard plain, let content = sends[i].request.content, let (channel, audience) = cleared else {
                cleared = nil
                carryOut(&stored, from: s)
                sendMessage(sends[i].request, id: id, from: s)
                continue
            }
            do throws(Failure) {
                try Validation.message(content: content, mentions: [], clientID: "", maxBodyBytes: settings.maxBodyBytes,
                                       maxMentions: settings.maxMentions, files: [], maxFiles: settings.filesPerMessage)
            } catch {
                s.fail(id, error)
                continue
            }
            store(sends[i].request, content, in: channel, audience: audience, queued: queued, id: id, from: s, now: now, into: &stored)
        }
        carryOut(&stored, from: s)
        return sends[i...]
    }

    /// Plain sends stored one after another, as one commit job (a session paused for the store is paused after it).
    private func carryOut(_ stored: inout Effects, from s: HomeSession) {
        guard !stored.changes.isEmpty else { return }
        var sends = Effects()
        swap(&sends, &stored)
        runner.carryOut(sends, to: s)
    }

    /// The channel a plain send of `s` goes to, and its audience's size, if
    /// the send may go there now and the channel's slow mode does not count
    /// each send (`Moderation.sent`); nil otherwise.
    private func clearance(_ id: ChannelID, for s: HomeSession, at now: UInt64) -> (channel: ChannelRecord, audience: Int)? {
        guard let channel = directory.channel(id), channel.slowModeSeconds == 0 else { return nil }
        do throws(Failure) {
            try services.requirePermission(SendRequest.plainNeeds, in: channel, for: s)
            try moderation.requireMaySend(s.user, in: channel, at: now)
        } catch {
            return nil
        }
        return (channel, audienceSize(channel))
    }

    /// A send that passed its checks, sequenced: its writes, addressed items
    /// and state change join `effects`, for the runner to store. It is
    /// answered and fanned out once committed (`messageSent`), or answered 503 (`messageNotSent`).
    /// `queued`: the bytes the loops' sessions hold (`PublisherPause.queuedBytes`).
    private func store(_ r: SendRequest, _ content: MessageContent, in channel: ChannelRecord, audience: Int, queued: Int, id: UInt64,
                       from s: HomeSession, now: UInt64, into effects: inout Effects) {
        let (seq, time) = directory.sequence(channel, now: now)
        if r.webhook == nil { moderation.sent(s.user, in: channel) }
        var record = MessageRecord(uid: r.uid != 0 ? r.uid : ids.next(nowMillis: now), serverID: channel.serverID, channelID: channel.id, seq: seq,
                                   sender: s.user, sentTime: time, content: content, mentions: r.mentions,
                                   mentionAll: r.mentionAll, needReceipt: r.needReceipt, clientID: r.clientID)
        if !r.clientID.isEmpty { recentSends.sending(sender: s.user, clientID: r.clientID) }
        // A mention by id is addressed to the member: it goes to their
        // inbox too (offline sync); live, the fan-out carries its cursor.
        record.attachments = r.files ?? []
        record.webhook = r.webhook
        var threadWrites: [StoreWrite] = []
        if let refs = r.references { record.refer(refs, writes: &threadWrites) }
        effects.writes.append(.message(record))
        effects.writes += threadWrites
        // Its addressed items' ords come to `messageSent` in this order (a plain send has none).
        let firstItem = effects.addressed.count
        var mentioned = Set<UserID>()
        for user in r.mentions where user != s.user && directory.canView(user, channel) && mentioned.insert(user).inserted {
            effects.addressed.append(AddressedItem(user: user, stored: .message(record.uid), live: .elsewhere))
        }
        let mentionedInOrder = effects.addressed[firstItem...].map(\.user)
        // Asking for receipts at send: the request and its items commit with the message.
        let receiptPlan = r.needReceipt ? groupReceipts.receiptRequestPlan(record) : nil
        if let receiptPlan {
            effects.writes.append(receiptPlan.write)
            effects.addressed += receiptPlan.addressed
        }
        let projected = publishers.publishing(s, bytes: content.size, recipients: audience, queued: queued)
        let sent = SentMessage(record: record, id: id, sender: s, projectedBytes: projected, mentioned: mentionedInOrder,
                               receiptPlan: receiptPlan, attachmentIDs: r.attachmentIDs)
        effects.changes.append(.messageSent(sent))
    }

    /// A stored send, settled: what it held reserved goes, then its answer and fan-out.
    func messageSent(_ m: SentMessage, ords: [UInt64]) {
        settle(m, ords: ords, now: now(), tellPosition: true)
    }

    /// A run's stored sends (`sendRun` commits them as one job), each settled
    /// as `messageSent` settles one, with the clock read once and, the
    /// gateways' interest brought up to date first (nothing in a follow-up
    /// changes it), whether any gateway keeps the sender's read position
    /// asked once per sender and channel: a publisher nobody else watches
    /// mostly tells none.
    func messagesSent(_ changes: [StateChange], ords: [UInt64]) {
        let now = now()
        interest.sync()
        var tell = true, last: (sender: UserID, channel: ChannelID)?
        for i in changes.indices {
            guard case .messageSent(let m) = changes[i] else { apply(changes[i], ords: ords); continue }
            if last?.sender != m.record.sender || last?.channel != m.record.channelID {
                tell = true
                last = (m.record.sender, m.record.channelID)
            }
            tell = settle(m, ords: ords, now: now, tellPosition: tell)
        }
    }

    /// Whether the sender's position is kept by a gateway, as far as this message asked.
    @discardableResult
    private func settle(_ m: SentMessage, ords: [UInt64], now: UInt64, tellPosition: Bool) -> Bool {
        attachments.release(m.attachmentIDs)
        publishers.fanOutQueued(m.projectedBytes)
        var mentionOrds: [UserID: UInt64] = [:]
        for (user, ord) in zip(m.mentioned, ords) { mentionOrds[user] = ord }
        let kept = messageCommitted(m.record, id: m.id, from: m.sender, mentionOrds: mentionOrds, now: now, tellPosition: tellPosition)
        if let plan = m.receiptPlan { groupReceipts.receipts.addRequest(plan.request, in: plan.channel) }
        return kept
    }

    /// A send whose commit failed: answered 503, what it held reserved goes, and its waiting resends are answered too.
    func messageNotSent(_ m: SentMessage) {
        m.sender.fail(m.id, Failure(.unavailable, Self.sendFailure))
        attachments.release(m.attachmentIDs)
        publishers.fanOutQueued(m.projectedBytes)
        _ = services.resendsSettled(m.record, ok: false)
    }


    /// `tellPosition`: false when an earlier message of the run found no gateway keeping the sender's position.
    /// Returns whether one keeps it, as far as this message asked.
    private func messageCommitted(_ record: MessageRecord, id: UInt64, from s: HomeSession, mentionOrds: [UserID: UInt64],
                                  now: UInt64, tellPosition: Bool) -> Bool {
        let waiters = services.resendsSettled(record, ok: true)
        metrics.messagesChannel.increment()
        directory.messageCommitted(record.channelID, seq: record.seq, time: record.sentTime)
        var kept = tellPosition
        // The sender has read up to its own message (a webhook is no reader); a mention counts for the mentioned.
        if record.webhook == nil {
            let before = positions.readUp(record.sender, record.channelID, to: record.seq, now: now)
            if tellPosition { kept = interest.positionMoved(record.sender, record.channelID, in: record.serverID) }
            subscriptions.touchActivity(record.sender, record.channelID, now: now, alreadyRecorded: true)
            if before + 1 < record.seq { reading.readMoved(record.sender, record.channelID, except: s.key) }
        }
        // (Most sends mention nobody: no set made for them.)
        for user in record.mentions.isEmpty ? [] : Set(record.mentions) where user != record.sender {
            positions.addMention(user, record.channelID, seq: record.seq, time: record.sentTime)
            interest.positionMoved(user, record.channelID, in: record.serverID)
        }
        if typing.board.stopped(record.sender, in: record.channelID), let c = directory.channel(record.channelID) { typing.typersChanged(c, by: record.sender) }
        // Encoded once for the answer, the waiting resends and the live event
        // (which carries the files apart, each recipient's links its own).
        record.encode(into: &committedMessageBytes)
        let message = committedMessageBytes
        let answer = record.attachments.isEmpty ? message : record.encoded(for: record.sender, self)
        s.respond(answering: id, message: answer)
        for (w, wid) in waiters { w.respond(answering: wid, message: answer) }
        if let last = mentionOrds.values.max() { runner.inboxDelivered(upTo: last) }
        fanOut(record, encoded: message, from: s, mentionOrds: mentionOrds, at: now)
        recentSends.expire(before: now - UInt64(settings.dedupWindowSeconds) * 1000)
        return kept
    }

    /// The channel, if the session may read it: as a member, or as a guest of its server when guests see it.

    /// A message as `user` sees it in an answer: a direct message with its recipient and
    /// sent status, a channel message with the user's receipt state.
    func shown(_ m: MessageRecord, to user: UserID) -> GHChannelMessage {
        m.serverID == 0 ? userHome.directMessage(m, for: user) : services.withFiles(groupReceipts.withReceipts([GHChannelMessage(m)], for: user)[0], m, to: user)
    }
}
