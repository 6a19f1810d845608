// How the parts of a request every home answered become one answer
// (`HomeRoutes`). Each home answers only for what it holds: a list of what
// it found, an entry per asked id, or "not found" when the thing is not
// its. The merge keeps request order where the request gave one, takes for
// each asked id the entry of the home that holds it, and for a thing one
// home holds takes that home's answer: a success, else an error other than
// "not found" (the holder's), else "not found". An error in a part of a
// list (a limit every home applies alike, a store that failed) is the
// answer. A request naming one channel or conversation that no gateway
// knows is asked of every home; the home holding it then answers for all
// (`GatherPart.fromHolder`), so its "message not found" is never taken for
// another home's "channel not found". Pure.

import GuildhallCore
import GuildhallWire

/// One home's answer to a gathered request.
struct GatherPart: Sendable {
    let result: GHResponse.OneOf_Result
    /// The home holds the one channel or conversation the request names: its answer is the answer.
    let fromHolder: Bool
}

enum GatherMerge {
    /// Servers: in the order asked, or by id (the caller's own).
    case servers(order: [ServerID]?)
    /// One page of the server directory from every home's matches (ServerDirectory.swift).
    case serverDirectory(cursor: UInt64, limit: Int)
    case messages(order: [MessageUID])
    /// Profiles, each from its user's home, in the order asked.
    case users(order: [UserID])
    /// User ids from every home, sorted.
    case userIDs
    case receipts
    case unreads(order: [ChannelID])
    /// One entry per target, in request order: the best of each.
    case subscribe
    case ok
    case conversations
    case sentStatuses
    /// One entry per UID asked, each the union of what the homes say.
    case receivedStatuses
    /// One home holds the thing asked about.
    case firstFound
    /// Not an answer: which of a SetReceivedStatus's messages the caller may read, before it goes to the user's home.
    case readableFirst(GHSetReceivedStatus)
    /// Not answers (SubscriptionGrants.swift): which of a Subscribe's targets
    /// could be taken, from their guild homes; then which of those fit the
    /// user's limits, from the user's home (`refused`: the answers of the
    /// others so far, nil where still asked).
    case checksFirst(GHSubscribe)
    case grantsFirst(GHSubscribe, refused: [GHTargetResult?])
    /// Not an answer: the newest seqs of a falling-back resume's channels (MissedChannels.swift).
    case tailsFirst(ResumeFallback)
    /// The granted targets' parts; the refused ones keep their places in the request's order.
    case granted(GHSubscribe, refused: [GHTargetResult?])

    func merged(_ parts: [GatherPart]) -> GHResponse.OneOf_Result {
        if case .firstFound = self, let holder = parts.first(where: \.fromHolder) { return holder.result }
        return merged(parts.map(\.result))
    }

    func merged(_ parts: [GHResponse.OneOf_Result]) -> GHResponse.OneOf_Result {
        if case .firstFound = self { return Self.firstFound(parts) }
        if let error = parts.first(where: { if case .error = $0 { true } else { false } }) { return error }
        switch self {
        case .servers(let order):
            var byID: [ServerID: GHServerInfo] = [:]
            for case .servers(let l) in parts { for s in l.servers { byID[s.serverID] = s } }
            var list = GHServerList()
            list.servers = order.map { $0.compactMap { byID[$0] } } ?? byID.keys.sorted().compactMap { byID[$0] }
            return .servers(list)
        case .serverDirectory(let cursor, let limit):
            var all: [GHServerInfo] = []
            for case .serverDirectory(let d) in parts { all += d.servers }
            all.sort(by: ServerDirectory.order)
            let start = Int(min(cursor, UInt64(all.count)))
            var page = GHServerDirectory()
            page.servers = Array(all[start..<min(all.count, start + limit)])
            if start + limit < all.count { page.nextCursor = UInt64(start + limit) }
            return .serverDirectory(page)
        case .messages(let order):
            var byUID: [MessageUID: GHChannelMessage] = [:]
            for case .messages(let p) in parts { for m in p.messages { byUID[m.uid] = m } }
            var page = GHMessagePage()
            page.messages = order.compactMap { byUID[$0] }
            return .messages(page)
        case .userIDs:
            var all: Set<UserID> = []
            for case .userIds(let l) in parts { all.formUnion(l.userIds) }
            var list = GHUserIDs()
            list.userIds = all.sorted()
            return .userIds(list)
        case .users(let order):
            var byID: [UserID: GHUserProfile] = [:]
            for case .users(let l) in parts { for u in l.users { byID[u.userID] = u } }
            var list = GHUserList()
            list.users = order.compactMap { byID[$0] }
            return .users(list)
        case .receipts:
            var merged: [GHReceiptInfo] = []
            for case .receipts(let l) in parts {
                if merged.isEmpty { merged = l.receipts; continue }
                for (i, r) in l.receipts.enumerated() where i < merged.count && r.requested { merged[i] = r }
            }
            var list = GHReceiptInfoList()
            list.receipts = merged
            return .receipts(list)
        case .unreads(let order):
            var byChannel: [ChannelID: GHUnreadInfo] = [:]
            for case .unreads(let l) in parts { for u in l.unreads { byChannel[u.channelID] = u } }
            var list = GHUnreadList()
            list.unreads = order.compactMap { byChannel[$0] }
            return .unreads(list)
        case .subscribe, .checksFirst:
            var merged: [GHTargetResult] = []
            for case .subscribe(let r) in parts {
                if merged.isEmpty { merged = r.results; continue }
                for (i, t) in r.results.enumerated() where i < merged.count && Self.rank(t.status) < Self.rank(merged[i].status) {
                    merged[i] = t
                }
            }
            var result = GHSubscribeResult()
            result.results = merged
            return .subscribe(result)
        case .ok:
            return .ok(GHOk())
        case .conversations:
            var list = GHConversationList()
            for case .conversations(let l) in parts { list.conversations += l.conversations }
            list.conversations.sort { ($0.lastMessageTime, $0.conversationID) > ($1.lastMessageTime, $1.conversationID) }
            return .conversations(list)
        case .sentStatuses:
            var merged: [GHMessageSentStatus] = []
            for case .sentStatuses(let l) in parts {
                if merged.isEmpty { merged = l.statuses; continue }
                for (i, st) in l.statuses.enumerated() where i < merged.count && st.status != .unspecified { merged[i] = st }
            }
            var list = GHSentStatusList()
            list.statuses = merged
            return .sentStatuses(list)
        case .receivedStatuses:
            var merged: [GHReceivedStatus] = []
            for case .receivedStatuses(let l) in parts {
                if merged.isEmpty { merged = l.statuses; continue }
                for (i, st) in l.statuses.enumerated() where i < merged.count {
                    merged[i].isRead = merged[i].isRead || st.isRead
                    merged[i].isListened = merged[i].isListened || st.isListened
                    merged[i].isDownloaded = merged[i].isDownloaded || st.isDownloaded
                    merged[i].isRetrieved = merged[i].isRetrieved || st.isRetrieved
                }
            }
            var list = GHReceivedStatusList()
            list.statuses = merged
            return .receivedStatuses(list)
        case .firstFound:
            return Self.firstFound(parts)
        case .readableFirst(let r):
            return Self.messages(order: r.messageUids).merged(parts)
        case .grantsFirst:
            return parts[0]
        case .tailsFirst(let f):
            return Self.unreads(order: f.asked.map(\.0)).merged(parts)
        case .granted(_, let refused):
            guard case .subscribe(let subset) = Self.subscribe.merged(parts) else { return Self.subscribe.merged(parts) }
            var results = subset.results.makeIterator()
            var all = GHSubscribeResult()
            all.results = refused.map { $0 ?? results.next() ?? GHTargetResult() }
            return .subscribe(all)
        }
    }

    /// A target's status from the home that holds its server wins over "not found" from the others.
    private static func rank(_ s: GHTargetStatus) -> Int {
        switch s {
        case .targetOk: 0
        case .targetNotFound: 2
        default: 1
        }
    }

    private static func firstFound(_ parts: [GHResponse.OneOf_Result]) -> GHResponse.OneOf_Result {
        var notFound: GHResponse.OneOf_Result?
        var other: GHResponse.OneOf_Result?
        for p in parts {
            guard case .error(let e) = p else { return p }
            if e.code == .notFound { notFound = notFound ?? p } else { other = other ?? p }
        }
        return other ?? notFound ?? .error(GHError(Failure.notFound("not found")))
    }
}
