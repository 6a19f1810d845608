// Whose log carries each write, in a cluster (docs/cluster.md): a guild's
// writes go to its guild's shard, a user's own state to the user's shard, a
// direct conversation's to its lower user's. A write that names only a
// message's channel finds the guild through the directory (or the
// conversation through the user home). A write that names none of them
// follows the job's first write that does; retention and log positions are
// each node's own and are not logged. Loop thread only (reads the home's state).

import GuildhallCore
import GuildhallStore

extension Home {
    /// The shard of each of `writes`, for the job they form.
    func logShards(_ writes: [StoreWrite]) -> JobShards {
        var shards = writes.map(logShard)
        if let first = shards.first(where: { $0 != nil }) ?? nil {
            for (i, w) in writes.enumerated() where shards[i] == nil && w.isReplicated { shards[i] = first }
        }
        var generations: [Int: UInt64] = [:]
        // A shard this home holds no state of (dropped) gets generation 0, which the log refuses.
        for case let shard? in shards { generations[shard] = shardGenerations[shard] ?? 0 }
        return JobShards(shards, generations: generations)
    }

    private func logShard(_ write: StoreWrite) -> Int? {
        let count = settings.shards
        func user(_ u: UserID) -> Int { ShardPlan.shard(user: u, shards: count) }
        func guild(_ g: ServerID) -> Int { ShardPlan.shard(guild: g, shards: count) }
        func conversation(_ id: UInt64) -> Int? {
            userHome.directs.byID[id].map { ShardPlan.shard(of: $0, shards: count) }
        }
        func channel(_ id: ChannelID) -> Int? {
            if let c = directory.channel(id) { return guild(c.serverID) }
            return conversation(id)
        }
        switch write {
        case .directory(let change):
            switch change {
            case .serverSaved(let r): return guild(r.id)
            case .serverDeleted(let id): return guild(id)
            case .memberSaved(let m): return guild(m.serverID)
            case .memberRemoved(let id, _), .inviteRemoved(let id, _), .banRemoved(let id, _), .roleDeleted(let id, _): return guild(id)
            case .inviteSaved(let i): return guild(i.serverID)
            case .inviteCodeSaved(let c): return guild(c.serverID)
            case .inviteCodeRemoved(let id, _), .timeoutRemoved(let id, _): return guild(id)
            case .timeoutSaved(let t): return guild(t.serverID)
            case .channelSaved(let c): return guild(c.serverID)
            case .channelDeleted(let id): return channel(id)
            case .banSaved(let b): return guild(b.serverID)
            case .roleSaved(let r): return guild(r.serverID)
            case .overrideSaved(let o): return guild(o.serverID)
            }
        case .message(let m): return m.serverID != 0 ? guild(m.serverID) : conversation(m.channelID)
        case .readPosition(_, let c, _), .receiptRequest(let c, _), .receiptAdvance(let c, _), .receivedSeq(_, let c, _), .unpinned(let c, _):
            return channel(c)
        case .messageEdited(_, _, _, let c), .messageRemoved(_, _, let c), .threadReply(_, _, let c), .reaction(_, _, _, _, _, let c):
            return channel(c)
        case .inbox(let row): return user(row.user)
        case .syncCursor(let u, _, _), .receivedStatus(let u, _, _), .presence(let u, _, _), .directPrivacy(let u, _): return user(u)
        case .profile(let p): return user(p.user)
        case .pushRegistered(let r): return user(r.user)
        case .pushUnregistered(let u, _): return user(u)
        case .pinned(let p): return channel(p.channelID)
        case .audited(let e): return guild(e.serverID)
        case .conversation(_, let users, _): return users.min().map(user)
        case .group(let g): return guild(g.id)
        case .webhookSaved(let w): return guild(w.serverID)
        case .webhookDeleted(_, let server): return guild(server)
        case .directSide(let id, _), .directRead(let id, _, _, _): return conversation(id)
        case .directBlock(let blocker, let blocked, _): return ShardPlan.shard(conversationOf: blocker, blocked, shards: count)
        case .fileCreated(let f): return f.serverID != 0 ? guild(f.serverID) : conversation(f.channelID)
        case .fileSwept(_, let server, let channel): return server != 0 ? guild(server) : conversation(channel)
        case .pruneInbox, .pruneAuditLog, .logPosition: return nil
        }
    }
}

extension StoreWrite {
    /// Whether the write belongs in a shard's log (not each node's own housekeeping).
    var isReplicated: Bool {
        switch self {
        case .pruneInbox, .pruneAuditLog, .logPosition: return false
        default: return true
        }
    }
}
