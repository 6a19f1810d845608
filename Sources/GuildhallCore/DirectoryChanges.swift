// How the Directory changes: a decision (what an operation decided, and the
// changes the store must write) and `apply`, the one way a change enters the
// live state, called once the change has committed. Until then reads see the
// state as it was, and a change the store refused is never seen
// (the Proto's UNAVAILABLE: 503 when it could not be stored, nothing was changed).
//
// `apply` takes each change as the store keeps it, so memory and the store
// end the same whatever else committed between the decision and the commit:
// a change naming a server that is gone does nothing, and a saved channel
// keeps the tail (last seq, last time, removed seqs) its messages moved since.

/// What a Directory operation decided: its value for the answer, and the changes to commit.
public struct DirectoryDecision<Value> {
    public let value: Value
    public let changes: [DirectoryChange]

    public init(_ value: Value, _ changes: [DirectoryChange]) {
        self.value = value
        self.changes = changes
    }
}

extension Directory {
    /// Committed changes, in the order they were written.
    public func apply(_ changes: [DirectoryChange]) {
        for c in changes { apply(c) }
    }

    public func apply(_ change: DirectoryChange) {
        switch change {
        case .serverSaved(let r):
            if servers[r.id] != nil { servers[r.id]!.record = r } else { servers[r.id] = ServerState(record: r) }
        case .serverDeleted(let id):
            _ = forget(id)
        case .memberSaved(let m):
            guard servers[m.serverID] != nil else { return }
            servers[m.serverID]!.members[m.userID] = m
            memberships[m.userID, default: []].insert(m.serverID)
            resize(m.serverID)
        case .memberRemoved(let server, let user):
            guard servers[server]?.members.removeValue(forKey: user) != nil else { return }
            lift(timeoutOf: user, in: server)
            servers[server]!.permissions.memberLeft(user)
            memberships[user]?.remove(server)
            if memberships[user]?.isEmpty == true { memberships.removeValue(forKey: user) }
            resize(server)
        case .inviteSaved(let i):
            servers[i.serverID]?.invites[i.userID] = i
        case .inviteRemoved(let server, let user):
            servers[server]?.invites.removeValue(forKey: user)
        case .channelSaved(var c):
            guard servers[c.serverID] != nil else { return }
            if let live = channels[c.id] {
                c.lastSeq = live.lastSeq
                c.lastMessageTime = live.lastMessageTime
                c.removed = live.removed
            }
            channels[c.id] = c
            servers[c.serverID]!.channels.insert(c.id)
        case .channelDeleted(let id):
            guard let c = channels.removeValue(forKey: id) else { return }
            nextSeq.removeValue(forKey: id)
            servers[c.serverID]?.permissions.channelDeleted(id)
            // Codes landing in it go with it (as the store deletes their rows).
            for code in servers[c.serverID]?.codes.values.filter({ $0.channelID == id }).map(\.code) ?? [] {
                servers[c.serverID]!.codes.removeValue(forKey: code)
                codeServers.removeValue(forKey: code)
            }
            servers[c.serverID]?.channels.remove(id)
        case .banSaved(let b):
            servers[b.serverID]?.bans[b.userID] = b
        case .banRemoved(let server, let user):
            servers[server]?.bans.removeValue(forKey: user)
        case .roleSaved(let r):
            servers[r.serverID]?.permissions.save(r)
        case .roleDeleted(let server, let id):
            servers[server]?.permissions.deleteRole(id)
        case .overrideSaved(let o):
            servers[o.serverID]?.permissions.save(o)
        case .inviteCodeSaved(let c):
            guard servers[c.serverID] != nil else { return }
            servers[c.serverID]!.codes[c.code] = c
            codeServers[c.code] = c.serverID
        case .inviteCodeRemoved(let server, let code):
            servers[server]?.codes.removeValue(forKey: code)
            codeServers.removeValue(forKey: code)
        case .timeoutSaved(let t):
            guard servers[t.serverID]?.members[t.userID] != nil else { return }
            timeouts[t.serverID, default: [:]][t.userID] = t.until
        case .timeoutRemoved(let server, let user):
            lift(timeoutOf: user, in: server)
        }
    }

    private func lift(timeoutOf user: UserID, in server: ServerID) {
        timeouts[server]?.removeValue(forKey: user)
        if timeouts[server]?.isEmpty == true { timeouts.removeValue(forKey: server) }
    }
}

extension Directory {
    /// Applies a decision at once, for a Directory kept without a store (benches, tests); returns its value.
    @discardableResult
    public func take<V>(_ decision: DirectoryDecision<V>) -> V {
        apply(decision.changes)
        return decision.value
    }
}
