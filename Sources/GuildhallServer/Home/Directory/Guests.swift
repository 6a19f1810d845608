// Guests and bans (docs/features.md): entering and leaving a server as a
// guest, banning and unbanning. Guest state belongs to the session and is
// not stored; the SDK enters again after a reconnect. Loop thread only.

import GuildhallCore
import GuildhallStore
import GuildhallWire

extension DirectoryRequests {
    func enterAsGuest(_ r: GHEnterAsGuest, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            let server = try directory.decide.guestEntry(r.serverID, user: s.user)
            if !s.guestOf.contains(server.id) {
                registry.guestEntered(s, server: server.id)
                runner.carryOut(.telling(Notice(.guestEntered, .server(server.id, isPublic: false), actor: s.user) { $0.member.userID = s.user }))
            }
            s.respond(id, .server(info(server)))
        }
    }

    func leaveAsGuest(_ r: GHLeaveAsGuest, id: UInt64, from s: HomeSession) {
        guard s.guestOf.contains(r.serverID) else {
            s.fail(id, .notFound("not a guest of server \(r.serverID)"))
            return
        }
        guestLeft(s, server: r.serverID)
        s.respond(id, .ok(GHOk()))
    }

    /// Ends a session's guest visit: its guest subscriptions go with it.
    func guestLeft(_ s: HomeSession, server: ServerID, notifyMembers: Bool = true) {
        book.drop(s.key, server: server, kinds: [.guestChannel, .guestServer])
        registry.guestLeft(s, server: server)
        if notifyMembers { runner.carryOut(.telling(Notice(.guestLeft, .server(server, isPublic: false), actor: s.user) { $0.member.userID = s.user })) }
    }

    /// Guests of a server lose what they may no longer see.
    func guestsRecheck(_ server: ServerID) {
        guard let record = directory.server(server) else { return }
        for s in registry.guests(of: server).values {
            if !record.allowGuests {
                guestLeft(s, server: server, notifyMembers: false)
                continue
            }
            for (channel, _) in book.subscriptions(of: s.key)?.guestChannels ?? [:] {
                if let c = directory.channel(channel), directory.guestVisible(c) { continue }
                book.unsubscribe(s.key, .guestChannel, SubscriptionTarget(server: server, channel: channel))
            }
        }
    }

    func banMember(_ r: GHBanMember, id: UInt64, from s: HomeSession) {
        change(r.serverID, id: id, from: s) { () throws(Failure) in
            let decision = try self.directory.decide.ban(r.userID, from: r.serverID, by: s.user, now: self.now(), until: r.until)
            var until = AuditDiff()
            until.field("until", nil, r.until == 0 ? nil : r.until)
            let audit = try self.audit(.memberBanned, r.serverID, by: s, target: r.userID, changes: until.changes, reason: r.reason)
            return self.effects(decision, also: audit, reply: .ok, notices: [
                Notice(.memberBanned, .server(r.serverID, isPublic: false), actor: s.user, targeted: [r.userID]) {
                    $0.member.serverID = r.serverID
                    $0.member.userID = r.userID
                }
            ])
        }
    }

    func unbanMember(_ r: GHUnbanMember, id: UInt64, from s: HomeSession) {
        change(r.serverID, id: id, from: s) { () throws(Failure) in
            let decision = try self.directory.decide.unban(r.userID, from: r.serverID, by: s.user)
            let audit = try self.audit(.memberUnbanned, r.serverID, by: s, target: r.userID, reason: r.reason)
            return self.effects(decision, also: audit, reply: .ok, notices: [
                Notice(.memberUnbanned, .server(r.serverID, isPublic: false), actor: s.user, targeted: [r.userID]) {
                    $0.member.serverID = r.serverID
                    $0.member.userID = r.userID
                }
            ])
        }
    }
}
