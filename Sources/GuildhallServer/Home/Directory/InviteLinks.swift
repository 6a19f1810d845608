// Invite links (docs/features.md "Invite links"), at the guild's home: making,
// listing and revoking a server's codes, and looking one up and joining by
// it. A request naming only a code goes to every home (its id does not say
// which home holds it); the home holding the code answers and the others
// say "not found" (GatherMerge.firstFound). Changes queue behind the
// server's other directory changes (DirectoryRequests.change), so two joins
// by a code with one use left cannot both get in. Decisions are
// InviteCodes.swift's. Loop thread only.

import GuildhallCore
import GuildhallWire

final class InviteLinks: HomePart {
    unowned let services: HomeServices
    /// A join by code is a join (DirectoryRequests.admitted), queued with the server's other changes.
    private unowned let requests: DirectoryRequests

    init(services: HomeServices, requests: DirectoryRequests) {
        self.services = services
        self.requests = requests
    }


    /// The wire form, with what the code leads to now.
    func info(_ c: InviteCode) -> GHInviteCode {
        var i = GHInviteCode()
        i.code = c.code
        i.serverID = c.serverID
        if let s = directory.server(c.serverID) {
            i.serverName = s.name
            i.serverIcon = s.icon
        }
        i.memberCount = UInt32(clamping: directory.memberCount(c.serverID))
        i.channelID = c.channelID
        i.channelName = directory.channel(c.channelID)?.name ?? ""
        i.creatorID = c.creator
        i.createdAt = c.createdAt
        i.expiresAt = c.expiresAt
        i.maxUses = c.maxUses
        i.uses = c.uses
        return i
    }

    private func manages(_ user: UserID, _ server: ServerID) -> Bool {
        directory.permissions(of: user, in: server)?.contains(.manageServer) == true
    }
}

extension InviteLinks {
    func create(_ r: GHCreateInviteCode, id: UInt64, from s: HomeSession) {
        requests.change(r.serverID, id: id, from: s) { () throws(Failure) in
            var random = SystemRandomNumberGenerator()
            let decision = try self.directory.decide.createInviteCode(InviteCode.draw(using: &random), server: r.serverID, channel: r.channelID,
                                                                     by: s.user, now: self.now(), maxAgeSeconds: r.maxAgeSeconds, maxUses: r.maxUses)
            let code = decision.value
            var made = AuditDiff()
            made.field("channelId", nil, code.channelID)
            made.field("maxUses", nil, code.maxUses == 0 ? nil : code.maxUses)
            made.field("expiresAt", nil, code.expiresAt == 0 ? nil : code.expiresAt)
            let audit = try self.requests.audit(.inviteCreated, r.serverID, by: s, target: code.code, channel: code.channelID, changes: made.changes,
                                                reason: r.reason)
            return self.requests.effects(decision, also: audit, reply: .read(.inviteCode(code)))
        }
    }

    func list(_ r: GHListInviteCodes, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            _ = try directory.seen(by: s.user).server(r.serverID)
            let all = manages(s.user, r.serverID)
            var l = GHInviteCodeList()
            l.codes = directory.inviteCodes(of: r.serverID, at: now()).filter { all || $0.creator == s.user }.map(info)
            s.respond(id, .inviteCodes(l))
        }
    }

    func revoke(_ r: GHRevokeInviteCode, id: UInt64, from s: HomeSession) {
        requests.change(directory.inviteCode(r.code, at: now())?.serverID, id: id, from: s) { () throws(Failure) in
            let decision = try self.directory.decide.revokeInviteCode(r.code, by: s.user, now: self.now()) { self.manages(s.user, $0) }
            let code = decision.value
            let audit = try self.requests.audit(.inviteRevoked, code.serverID, by: s, target: code.code, channel: code.channelID, reason: r.reason)
            return self.requests.effects(decision, also: audit, reply: .ok)
        }
    }

    func lookUp(_ r: GHLookUpInvite, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            guard let c = directory.inviteCode(r.code, at: now()) else { throw Failure.notFound("invite \(r.code) not found, or expired") }
            s.respond(id, .inviteCode(info(c)))
        }
    }

    func join(_ r: GHJoinByInvite, id: UInt64, from s: HomeSession) {
        requests.change(directory.inviteCode(r.code, at: now())?.serverID, id: id, from: s) { () throws(Failure) in
            let decision = try self.directory.decide.joinByInviteCode(r.code, user: s.user, now: self.now())
            let (code, member) = decision.value
            return self.requests.admitted(DirectoryDecision(member, decision.changes), server: code.serverID, from: s,
                                          reply: .read(.inviteCode(code)))
        }
    }
}
