// Requests on roles and overrides (docs/features.md), and what a change of
// permissions does once stored: sessions drop the channels their users may
// no longer view, as the Directory takes the change, before anything else is
// fanned out. Each change is committed, then answered and broadcast like
// other server notifications (DirectoryCommits.swift), in turn with the
// server's other changes (`DirectoryRequests.change`). Loop thread only.

import GuildhallCore
import GuildhallStore
import GuildhallWire

final class PermissionRequests: HomePart {
    unowned let services: HomeServices
    /// Role and override changes are changes to a server, queued and written as its other changes are.
    private unowned let requests: DirectoryRequests

    init(services: HomeServices, requests: DirectoryRequests) {
        self.services = services
        self.requests = requests
    }
    /// Where changes to a server queue and become effects.
}

extension PermissionRequests {
    func createRole(_ r: GHCreateRole, id: UInt64, from s: HomeSession) {
        requests.change(r.serverID, id: id, from: s) { () throws(Failure) in
            let decision = try self.directory.decide.createRole(in: r.serverID, by: s.user, name: r.name, position: r.position,
                                                         permissions: r.permissions.domain, now: self.now())
            return self.roleChanged(.roleCreated, decision, from: s, audit: try self.requests.audit(
                .roleCreated, r.serverID, by: s, target: "\(decision.value.id)", changes: AuditDiff.role(nil, decision.value), reason: r.reason))
        }
    }

    func updateRole(_ r: GHUpdateRole, id: UInt64, from s: HomeSession) {
        requests.change(r.serverID, id: id, from: s) { () throws(Failure) in
            let before = try? self.directory.role(r.roleID, in: r.serverID)
            let decision = try self.directory.decide.updateRole(r.roleID, in: r.serverID, by: s.user, name: r.hasName ? r.name : nil,
                                                         position: r.hasPosition ? r.position : nil,
                                                         permissions: r.hasPermissions ? r.permissions.domain : nil)
            return self.roleChanged(.roleUpdated, decision, from: s, audit: try self.requests.audit(
                .roleUpdated, r.serverID, by: s, target: "\(r.roleID)", changes: AuditDiff.role(before, decision.value), onlyIfChanged: true,
                reason: r.reason))
        }
    }

    func deleteRole(_ r: GHDeleteRole, id: UInt64, from s: HomeSession) {
        requests.change(r.serverID, id: id, from: s) { () throws(Failure) in
            let decision = try self.directory.decide.deleteRole(r.roleID, in: r.serverID, by: s.user)
            return self.roleChanged(.roleDeleted, decision, from: s, answerOK: true, audit: try self.requests.audit(
                .roleDeleted, r.serverID, by: s, target: "\(r.roleID)", changes: AuditDiff.role(decision.value, nil), reason: r.reason))
        }
    }

    /// Once stored, sessions drop what their users may no longer view, before anything else is fanned out.
    private func roleChanged(_ kind: GHNotificationKind, _ decision: DirectoryDecision<RoleRecord>, from s: HomeSession,
                             answerOK: Bool = false, audit: [StoreWrite]) -> Effects {
        let role = decision.value
        return requests.effects(decision, also: audit, reply: answerOK ? .ok : .result(.role(GHRoleInfo(role))),
                                notices: [Notice(kind, .server(role.serverID, isPublic: false), actor: s.user) { $0.role = GHRoleInfo(role) }])
    }

    func grantRole(_ r: GHGrantRole, id: UInt64, from s: HomeSession) {
        requests.change(r.serverID, id: id, from: s) { () throws(Failure) in
            let before = self.directory.member(r.userID, of: r.serverID)
            return try self.memberRolesChanged(try self.directory.decide.grant(r.roleID, to: r.userID, in: r.serverID, by: s.user), from: s,
                                               before: before, reason: r.reason)
        }
    }

    func takeBackRole(_ r: GHTakeBackRole, id: UInt64, from s: HomeSession) {
        requests.change(r.serverID, id: id, from: s) { () throws(Failure) in
            let before = self.directory.member(r.userID, of: r.serverID)
            return try self.memberRolesChanged(try self.directory.decide.takeBack(r.roleID, from: r.userID, in: r.serverID, by: s.user), from: s,
                                               before: before, reason: r.reason)
        }
    }

    func setMemberRole(_ r: GHSetMemberRole, id: UInt64, from s: HomeSession) {
        requests.change(r.serverID, id: id, from: s) { () throws(Failure) in
            guard let role = r.role.domain else { throw Failure.badRequest("role must be ADMIN or MEMBER") }
            let before = self.directory.member(r.userID, of: r.serverID)
            return try self.memberRolesChanged(try self.directory.decide.setRole(role, of: r.userID, in: r.serverID, by: s.user), from: s,
                                               before: before, reason: r.reason)
        }
    }

    /// Answers with the member; a change is committed first, and broadcast
    /// (and told to the member, who may not subscribe to the server).
    private func memberRolesChanged(_ decision: DirectoryDecision<MemberRecord>, from s: HomeSession, before: MemberRecord?,
                                    reason: String) throws(Failure) -> Effects {
        let member = decision.value
        var roles = AuditDiff()
        roles.ids("roles", before?.roles, member.roles)
        let audit = try self.requests.audit(.memberRolesChanged, member.serverID, by: s, target: member.userID, changes: roles.changes, reason: reason)
        guard !decision.changes.isEmpty else { return Effects(reply: .result(.member(GHMember(member)))) }
        return requests.effects(decision, also: audit, reply: .result(.member(GHMember(member))), notices: [
            Notice(.memberRoleChanged, .server(member.serverID, isPublic: false), actor: s.user, targeted: [member.userID]) {
                $0.member = GHMember(member)
            }
        ])
    }

    func setPermissionOverride(_ r: GHSetPermissionOverride, id: UInt64, from s: HomeSession) {
        requests.change(r.override.serverID, id: id, from: s) { () throws(Failure) in
            let asked = try r.override.domain
            let before = self.directory.override(on: asked.channelID, for: asked.target, in: asked.serverID)
            let decision = try self.directory.decide.setOverride(asked, by: s.user)
            let o = decision.value
            var bits = AuditDiff()
            bits.field("allow", before?.allow.rawValue, o.permissions.allow.rawValue)
            bits.field("deny", before?.deny.rawValue, o.permissions.deny.rawValue)
            let target = switch o.target {
            case .role(let id): "\(id)"
            case .member(let user): user
            }
            let audit = try self.requests.audit(.overrideChanged, o.serverID, by: s, target: target, channel: o.channelID, changes: bits.changes,
                                                onlyIfChanged: true, reason: r.reason)
            let audience: Notice.Audience = if let c = self.directory.channel(o.channelID) {
                .channel(c, isPublic: false)
            } else {
                .server(o.serverID, isPublic: false)
            }
            return self.requests.effects(decision, also: audit, reply: .result(.override(GHPermissionOverride(o))),
                                         notices: [Notice(.overrideChanged, audience, actor: s.user) { $0.override = GHPermissionOverride(o) }])
        }
    }

    func listRoles(_ r: GHListRoles, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            var list = GHRoleList()
            list.roles = try directory.seen(by: s.user).roles(of: r.serverID).map(GHRoleInfo.init)
            list.overrides = try directory.seen(by: s.user).overrides(of: r.serverID).map(GHPermissionOverride.init)
            s.respond(id, .roles(list))
        }
    }

    func getPermissions(_ r: GHGetPermissions, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            let user = r.userID.isEmpty ? s.user : r.userID
            _ = try directory.seen(by: s.user).server(r.serverID)
            if r.channelID != 0 {
                guard let c = directory.channel(r.channelID), c.serverID == r.serverID, directory.canView(s.user, c) else {
                    throw Failure.notFound("channel \(r.channelID) not found")
                }
            }
            guard let granted = directory.permissions(of: user, in: r.serverID, channel: r.channelID == 0 ? nil : r.channelID) else {
                throw Failure.notFound("\(user) is not a member of server \(r.serverID)")
            }
            var p = GHPermissions()
            p.serverID = r.serverID
            p.channelID = r.channelID
            p.userID = user
            p.granted = granted.rawValue
            s.respond(id, .permissions(p))
        }
    }
}

extension Subscriptions {
    /// Permissions changed in `server` (for one member, or all): every
    /// session of a member there drops its subscriptions to channels its user
    /// may no longer view and is told so (SUBSCRIPTION_CHANGED); auto-subscribe
    /// users' ladders are assigned again over the channels they may view.
    func accessChanged(in server: ServerID, only user: UserID? = nil) {
        let sessions = user.map { registry.sessions(of: $0).values.filter { directory.permissions(of: $0.user, in: server) != nil } }
            ?? Array(registry.onlineMembers(of: server).values)
        var autoUsers: Set<UserID> = []
        for s in sessions {
            if s.autoSubscribe { autoUsers.insert(s.user) }
            guard let held = book.subscriptions(of: s.key) else { continue }
            var lost: [ChannelID: SubscriptionTarget] = [:]
            for (kind, t) in held.all where t.server == server && kind.targetsChannel && Self.memberKinds.contains(kind) {
                guard let c = directory.channel(t.channel), !directory.canView(s.user, c) else { continue }
                book.unsubscribe(s.key, kind, t)
                lost[t.channel] = t
            }
            tellSubscriptionChanges(lost.sorted { $0.key < $1.key }.map { Self.entry(nil, $0.value) }, to: [s])
        }
        for u in autoUsers { reassignAuto(u) }
    }
}
