// Channel messages: send (durable before acknowledged and fanned out),
// history pages and lookups by UID. Loop thread only.

import GuildhallCore
import GuildhallStore
import GuildhallWire

extension GuildhallService {
    func sendMessage(_ r: GHSendMessage, id: UInt64, from s: Session) {
        attempt(id, s) { () throws(Failure) in
            let content = try r.body.domain()
            try Validation.message(content: content, mentions: r.mentions, clientID: r.clientID,
                                   maxBodyBytes: settings.maxBodyBytes, maxMentions: settings.maxMentions)
            if !r.clientID.isEmpty, let original = recentSends.lookup(sender: s.user, clientID: r.clientID) {
                if original.committed {
                    s.respond(id, .message(GHChannelMessage(original.message)))
                } else {
                    recentSends.wait(sender: s.user, clientID: r.clientID, session: s, id: id)
                }
                return
            }
            let now = now()
            let (channel, seq, time) = try directory.appendMessage(to: r.channelID, by: s.user, now: now)
            let record = MessageRecord(uid: ids.next(nowMillis: now), serverID: channel.serverID, channelID: channel.id, seq: seq,
                                       sender: s.user, sentTime: time, content: content, mentions: r.mentions,
                                       mentionAll: r.mentionAll, needReceipt: r.needReceipt, clientID: r.clientID)
            if !r.clientID.isEmpty { recentSends.remember(record, committed: false) }
            commit([.message(record)], from: s) { error in
                self.messageCommitted(record, ok: error == nil, id: id, from: s)
            }
        }
    }

    private func messageCommitted(_ record: MessageRecord, ok: Bool, id: UInt64, from s: Session) {
        let waiters = record.clientID.isEmpty ? [] : recentSends.settle(record, committed: ok)
        guard ok else {
            let failure = Failure(.unavailable, "storage is unavailable; the message was not sent, retry later")
            s.fail(id, failure)
            for (w, wid) in waiters { w.fail(wid, failure) }
            return
        }
        let message = GHChannelMessage(record)
        s.respond(id, .message(message))
        for (w, wid) in waiters { w.respond(wid, .message(message)) }
        deliver(.message(message), toServer: record.serverID, except: s)
        recentSends.expire(before: now() - UInt64(settings.dedupWindowSeconds) * 1000)
    }

    func getHistory(_ r: GHGetHistory, id: UInt64, from s: Session) {
        attempt(id, s) { () throws(Failure) in
            _ = try directory.readableChannel(r.channelID, by: s.user)
            let limit = r.limit == 0 ? Limits.defaultPageSize : Int(r.limit)
            guard limit <= Limits.maxPageSize else {
                throw Failure(.limitReached, "page size \(limit) is over the limit of \(Limits.maxPageSize)")
            }
            read(.history(channel: r.channelID, anchor: r.seq, after: r.direction == .after, limit: limit)) { result in
                self.answer(result, id: id, to: s)
            }
        }
    }

    func getMessages(_ r: GHGetMessages, id: UInt64, from s: Session) {
        guard r.uids.count <= Limits.maxIdsPerRequest else {
            s.fail(id, Failure(.limitReached, "at most \(Limits.maxIdsPerRequest) UIDs per request"))
            return
        }
        read(.messages(uids: r.uids)) { result in self.answer(result, id: id, to: s) }
    }

    /// Answers a read, keeping only messages of channels the user can read now.
    private func answer(_ result: ReadResult, id: UInt64, to s: Session) {
        if let error = result.error {
            log.error("read failed", ["error": error.description])
            s.fail(id, Failure(.unavailable, "storage is unavailable; retry later"))
            return
        }
        var page = GHMessagePage()
        page.messages = result.messages
            .filter { (try? directory.readableChannel($0.channelID, by: s.user)) != nil }
            .map(GHChannelMessage.init)
        page.moreAvailable = result.hasMore
        s.respond(id, .messages(page))
    }
}
