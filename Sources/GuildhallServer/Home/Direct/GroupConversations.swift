// Group conversations (docs/features.md "Group conversations"): direct
// conversations of 3 to 10 users with a name and an owner. One is made at
// the home where it is asked for, with an id placed as a guild's
// (`Home.newGuildID`), so every later request naming it finds that home,
// on one node or in a cluster (its writes go to its id's shard). Its
// messages, receipts and typing are a pair's, per member
// (DirectMessages.swift); what is here is its membership: made, renamed,
// members added, removed or gone. Changes to one group take turns
// (`ChangeSlot.group`); each is stored with its CONVERSATION_UPDATED
// notice to every member, and to one who is no longer one, as items
// addressed to them (so their offline sync has it). Once stored, the
// change is made again on the group as it is then (sends may have
// committed meanwhile). Blocks do not apply inside a group. Loop thread only.

import GuildhallCore
import GuildhallStore
import GuildhallWire

extension UserHome {
    func createGroup(_ r: GHCreateGroupConversation, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            try Validation.plainName(r.name, field: "name")
            let others = try Self.users(r.userIds)
            if others.contains(s.user) { throw Failure.badRequest("user_ids: leave yourself out; you are a member of what you make") }
            let sizes = DirectConversation.groupSizes
            guard sizes.contains(others.count + 1) else {
                throw Failure.badRequest("a group has \(sizes.lowerBound) to \(sizes.upperBound) members: name \(sizes.lowerBound - 1) to \(sizes.upperBound - 1) others")
            }
            // Only server-mates may put someone who asks for that into a group.
            directPrivacy.check(from: s.user, to: others) { [self] failure in
                if let failure { return s.fail(id, failure) }
                let now = now()
                guard let cid = services.newGuildID(now: now) else { return s.fail(id, Failure(.unavailable, "no id could be placed here now; retry")) }
                let c = DirectConversation(group: cid, name: r.name, owner: s.user, members: others + [s.user], membersMayAdd: r.membersMayAdd,
                                           createdAt: now)
                runner.carryOut(groupChange(c, by: s, told: c.members, change: .created(c)), answering: id, to: s)
            }
        }
    }

    func updateGroup(_ r: GHUpdateGroupConversation, id: UInt64, from s: HomeSession) {
        groupChange(r.conversationID, id: id, from: s) { [self] c throws(Failure) in
            guard c.owner == s.user else { throw Failure.forbidden("only the group's owner renames it or changes who may add members") }
            if r.hasName { try Validation.plainName(r.name, field: "name") }
            let change = GroupChange.renamed(r.hasName ? r.name : nil, membersMayAdd: r.hasMembersMayAdd ? r.membersMayAdd : nil)
            var after = c
            change.make(on: &after)
            guard after != c else { return nil }
            return groupChange(after, by: s, told: after.members, change: change)
        }
    }

    func addGroupMembers(_ r: GHAddGroupMembers, id: UInt64, from s: HomeSession, cleared: Bool = false) {
        // Those added who ask for it must share a server with whoever adds them (asked before the change waits its turn).
        if !cleared, directs[r.conversationID]?.includes(s.user) == true, let users = try? Self.users(r.userIds), !users.isEmpty {
            let new = users.filter { directs[r.conversationID]?.includes($0) == false }
            if !new.isEmpty {
                return directPrivacy.check(from: s.user, to: new) { failure in
                    if let failure { return s.fail(id, failure) }
                    self.addGroupMembers(r, id: id, from: s, cleared: true)
                }
            }
        }
        groupChange(r.conversationID, id: id, from: s) { [self] c throws(Failure) in
            guard c.mayAdd(s.user) else { throw Failure.forbidden("only the group's owner adds members to it") }
            let users = try Self.users(r.userIds)
            guard !users.isEmpty else { throw Failure.badRequest("user_ids: name at least one user") }
            let now = now()
            var after = c
            let added = after.admit(users, now: now)
            guard !added.isEmpty else { return nil }
            let most = DirectConversation.groupSizes.upperBound
            guard after.members.count <= most else {
                throw Failure.badRequest("a group has at most \(most) members; this one has \(c.members.count)")
            }
            var effects = groupChange(after, by: s, told: after.members, change: .admitted(users, at: now))
            effects.writes += added.map { .directSide(conversation: c.id, $0) }
            return effects
        }
    }

    func removeGroupMember(_ r: GHRemoveGroupMember, id: UInt64, from s: HomeSession) {
        groupChange(r.conversationID, id: id, from: s) { [self] c throws(Failure) in
            guard c.owner == s.user else { throw Failure.forbidden("only the group's owner removes members from it") }
            guard r.userID != s.user else { throw Failure.badRequest("the owner leaves with LeaveGroupConversation, not by removing themselves") }
            guard c.includes(r.userID) else { throw Failure.notFound("\(r.userID) is not in conversation \(c.id)") }
            var after = c
            after.dismiss(r.userID)
            return groupChange(after, by: s, told: c.members, change: .dismissed(r.userID))
        }
    }

    func leaveGroup(_ r: GHLeaveGroupConversation, id: UInt64, from s: HomeSession) {
        groupChange(r.conversationID, id: id, from: s) { [self] c throws(Failure) in
            var after = c
            after.dismiss(s.user)
            var effects = groupChange(after, by: s, told: c.members, change: .dismissed(s.user))
            effects.reply = .ok
            return effects
        }
    }

    // MARK: Carrying a change out

    /// A change to a group the caller is in, once the group's changes before it settled; `decide` returns nil for a no-op (answered with the group as it is).
    private func groupChange(_ cid: UInt64, id: UInt64, from s: HomeSession,
                             _ decide: @escaping (DirectConversation) throws(Failure) -> Effects?) {
        change(directs[cid]?.isGroup == true ? .group(cid) : nil, id: id, from: s) { [self] settle throws(Failure) in
            let c = try ownConversation(cid, for: s)
            // A pair's id names no group (and in a cluster or with several loops, goes where no pair is held).
            guard c.isGroup else { throw Failure.notFound("conversation \(cid) not found") }
            guard let effects = try decide(c) else {
                s.respond(id, .conversation(conversationInfo(c, for: s.user)))
                return settle(nil)
            }
            settle(effects)
        }
    }

    /// Stores the group as `after` is, with a notice to each of `told`; once
    /// stored, `change` is made on the group as it is then (its sides may
    /// have taken receipts meanwhile), and the caller gets the group.
    private func groupChange(_ after: DirectConversation, by s: HomeSession, told: [UserID], change: GroupChange) -> Effects {
        let items = told.map { user in AddressedItem.event(EventCopy(.notification(notice(after, for: user, by: s.user))), to: user) }
        var e = Effects(writes: [.group(GroupRow(after))], addressed: items,
                        reply: .read(.conversation(after, for: s.user)))
        e.changes = [.groupChanged(after, change)]
        return e
    }

    /// A group's change, once stored (`StateChange.groupChanged`): made on the group as it is now, or `after` when it is new here.
    func groupChanged(_ after: DirectConversation, _ change: GroupChange) {
        var now = directs[after.id] ?? after
        change.make(on: &now)
        directs.add(now)
    }

    private func notice(_ c: DirectConversation, for user: UserID, by actor: UserID) -> GHSystemNotification {
        var n = GHSystemNotification()
        n.kind = .conversationUpdated
        n.channelID = c.id
        n.actorID = actor
        n.time = now()
        n.conversation = conversationInfo(c, for: user)
        return n
    }

    // MARK: Checks

    /// Distinct, well-formed user ids, in the order first named.
    private static func users(_ ids: [UserID]) throws(Failure) -> [UserID] {
        var seen: Set<UserID> = []
        var out: [UserID] = []
        for user in ids {
            if let problem = Validation.userIDProblem(user) { throw Failure.badRequest("user_ids: \(problem)") }
            if seen.insert(user).inserted { out.append(user) }
        }
        return out
    }
}

/// What a group conversation's change does, as data (`StateChange.groupChanged`).
enum GroupChange {
    case created(DirectConversation)
    /// New name and who may add members; nil leaves each as it is.
    case renamed(String?, membersMayAdd: Bool?)
    case admitted([UserID], at: UInt64)
    case dismissed(UserID)

    func make(on g: inout DirectConversation) {
        switch self {
        case .created(let c): g = c
        case .renamed(let name, let mayAdd):
            if let name { g.name = name }
            if let mayAdd { g.membersMayAdd = mayAdd }
        case .admitted(let users, let time): _ = g.admit(users, now: time)
        case .dismissed(let user): g.dismiss(user)
        }
    }
}
