// Reading channel messages back (docs/features.md): history pages before
// or after a seq or a time, a thread's replies, and messages by UID; and
// search (MessageSearch.swift). What a page holds is what the session may
// read now: a channel it may no longer read, or a conversation not its
// user's, is answered as one that does not exist. Loop thread only.

import GuildhallCore
import GuildhallStore
import GuildhallWire

final class MessageReads: HomePart {
    unowned let services: HomeServices
    /// Direct conversations, and who may see a direct message.
    unowned let userHome: UserHome
    /// A message as a user sees it in an answer (Home.shown).
    let shown: (MessageRecord, UserID) -> GHChannelMessage

    init(services: HomeServices, userHome: UserHome, shown: @escaping (MessageRecord, UserID) -> GHChannelMessage) {
        self.services = services
        self.userHome = userHome
        self.shown = shown
    }
}

extension MessageReads {
    func getHistory(_ r: GHGetHistory, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            try readableConversation(r.channelID, for: s)
            let limit = try pageSize(r.limit)
            let after = r.direction == .after
            let request: ReadRequest = r.time != 0
                ? .historyAtTime(channel: r.channelID, time: r.time, after: after, limit: limit, viewer: s.user)
                : .history(channel: r.channelID, anchor: r.seq, after: after, limit: limit, viewer: s.user)
            read(request) { result in self.answer(result, id: id, to: s) }
        }
    }

    /// A thread's replies, oldest first.
    func getThread(_ r: GHGetThread, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            try readableConversation(r.channelID, for: s)
            let limit = try pageSize(r.limit)
            read(.messages(uids: [r.rootUid])) { root in
                guard root.error == nil, let m = root.messages.first, m.channelID == r.channelID else {
                    return s.fail(id, root.error != nil ? Failure(.unavailable, "storage is unavailable; retry later")
                                                        : MessageOperations.notFound(r.rootUid))
                }
                self.read(.thread(root: m.uid, after: r.afterSeq, limit: limit, viewer: s.user)) { result in self.answer(result, id: id, to: s) }
            }
        }
    }

    /// Throws unless `id` is a channel the session may read or a conversation of its user (404 alike otherwise).
    private func readableConversation(_ id: UInt64, for s: HomeSession) throws(Failure) {
        if let c = userHome.directs[id] {
            // Answered as for any id that names nothing.
            guard c.includes(s.user) else { throw Failure.notFound("channel \(id) not found") }
        } else {
            _ = try services.readableChannel(id, for: s)
        }
    }

    private func pageSize(_ asked: UInt32) throws(Failure) -> Int {
        let limit = asked == 0 ? Limits.defaultPageSize : Int(asked)
        guard limit <= Limits.maxPageSize else { throw Failure(.limitReached, "page size \(limit) is over the limit of \(Limits.maxPageSize)") }
        return limit
    }

    func getMessages(_ r: GHGetMessages, id: UInt64, from s: HomeSession) {
        guard r.uids.count <= Limits.maxIdsPerRequest else {
            s.fail(id, Failure(.limitReached, "at most \(Limits.maxIdsPerRequest) UIDs per request"))
            return
        }
        read(.messages(uids: r.uids, viewer: s.user)) { result in self.answer(result, id: id, to: s) }
    }

    /// Answers a read, keeping only messages of channels the user can read now.
    private func answer(_ result: ReadResult, id: UInt64, to s: HomeSession) {
        if let error = result.error {
            log.error("read failed", ["error": error.description])
            s.fail(id, Failure(.unavailable, "storage is unavailable; retry later"))
            return
        }
        var page = GHMessagePage()
        page.messages = result.messages.compactMap { m in
            if m.serverID == 0 { return userHome.canSeeDirect(m, s.user) ? shown(m, s.user) : nil }
            guard (try? services.readableChannel(m.channelID, for: s)) != nil else { return nil }
            return shown(m, s.user)
        }
        page.moreAvailable = result.hasMore
        s.respond(id, .messages(page))
    }
}
