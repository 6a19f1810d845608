// Profiles (docs/features.md "Profiles"). Every home plays two parts:
//
// - As the home of its users it keeps their profiles (`SetProfile`, stored
//   before anyone hears of it) and answers `GetUsers` for them. A change is
//   told to every home (`HomeMail.profiles`, changed); a user's first session
//   here, and a guild home that admitted the user (`profilesAsked`), get a
//   reminder that fixes copies without telling anyone.
// - As a guild's home it copies each profile onto the user's member records
//   of its servers (stored in turn with the server's other changes, so member
//   lists order by name and a cluster's guild log carries the names), and
//   tells the change (USER_UPDATED) to the sessions here that hear the user's
//   presence, and member-list windows that hold the user. A session hearing
//   the user from several homes may get it more than once; it is the whole
//   profile each time.
//
// Nicknames are a member's own, decided at the guild's home (`SetNickname`).
// Loop thread only.

import GuildhallCore
import GuildhallStore
import GuildhallWire

final class Profiles: HomePart {
    unowned let services: HomeServices
    /// Those who hear a user's presence hear of their profile.
    private unowned let presences: Presences
    /// An avatar is an upload, claimed and let go (Attachments); a nickname or a
    /// copied profile is a change to a server, queued with its other changes.
    /// Built after this part, and handed to it then (`use`).
    private unowned var attachments: Attachments!
    private unowned var requests: DirectoryRequests!
    /// The profiles of users homed here who set one.
    private(set) var profiles: [UserID: UserProfile] = [:]

    init(services: HomeServices, presences: Presences) {
        self.services = services
        self.presences = presences
    }

    /// The parts built after this one that it uses.
    func use(_ attachments: Attachments, _ requests: DirectoryRequests) {
        self.attachments = attachments
        self.requests = requests
    }

    func load(_ stored: [UserProfile]) { for p in stored { profiles[p.user] = p } }

    private func isHomeOf(_ user: UserID) -> Bool { services.place(user: user) == services.index }

    private func profile(of user: UserID) -> UserProfile { profiles[user] ?? UserProfile(user: user) }

    /// Whether `file` is an avatar upload of a user homed here that their profile no longer (or never) names: the sweep's to delete.
    func isUnusedAvatar(_ file: FileRecord) -> Bool {
        file.serverID == 0 && file.channelID == 0 && isHomeOf(file.uploader)
            && !(profiles[file.uploader]?.avatar.contains("\(DownloadLink.pathPrefix)\(file.id)/") ?? false)
    }

    /// A profile, once stored (`StateChange.profileSaved`).
    func saved(_ p: UserProfile) { profiles[p.user] = p }
}

// MARK: Requests

extension Profiles {
    /// At the user's home. `avatar`: the uploaded avatar it names, once checked (and claimed) by `Attachments.resolve`.
    func setProfile(_ r: GHSetProfile, id: UInt64, from s: HomeSession, avatar: FileAttachment? = nil) {
        if r.hasAvatarFileID, avatar == nil {
            guard !r.hasAvatar else { return s.fail(id, .badRequest("name avatar or avatar_file_id, not both")) }
            return attachments.resolve([r.avatarFileID], serverID: 0, channelID: 0, id: id, for: s) { found in
                self.setProfile(r, id: id, from: s, avatar: found[0])
            }
        }
        var carriedOut = false
        defer { if let avatar, !carriedOut { attachments.release([avatar.fileID]) } }
        attempt(id, s) { () throws(Failure) in
            let before = profile(of: s.user)
            var p = before
            if let avatar { p.avatar = AttachmentLinks(settings).lasting(avatar) }
            if r.hasDisplayName {
                if let problem = UserProfile.nameProblem(r.displayName, field: "display name") { throw .badRequest(problem) }
                p.displayName = r.displayName
            }
            if r.hasAvatar {
                if let problem = UserProfile.avatarProblem(r.avatar) { throw .badRequest(problem) }
                p.avatar = r.avatar
            }
            guard p != before else { return s.respond(id, .profile(GHUserProfile(before))) }
            p.updatedAt = now()
            let claimed = avatar.map { [$0.fileID] } ?? []
            var effects = Effects(writes: [.profile(p)], reply: .result(.profile(GHUserProfile(p))),
                                  followUps: [.filesClaimed(claimed), .profileChanged(p)])
            effects.changes = [.profileSaved(p)]
            runner.carryOut(effects, answering: id, to: s)
            carriedOut = true
        }
    }

    /// At every home: each answers for the users homed there.
    func getUsers(_ r: GHGetUsers, id: UInt64, from s: HomeSession) {
        guard r.userIds.count <= Limits.maxIdsPerRequest else {
            return s.fail(id, Failure(.limitReached, "at most \(Limits.maxIdsPerRequest) user ids per request"))
        }
        var list = GHUserList()
        list.users = r.userIds.filter { Validation.userIDProblem($0) == nil && isHomeOf($0) }.map { GHUserProfile(profile(of: $0)) }
        s.respond(id, .users(list))
    }

    /// At the guild's home: one's own nickname as any member, another's with MANAGE_NICKNAMES (audited).
    func setNickname(_ r: GHSetNickname, id: UInt64, from s: HomeSession) {
        requests.change(r.serverID, id: id, from: s) { () throws(Failure) in
            let user = r.userID.isEmpty ? s.user : r.userID
            let other = user != s.user
            if other { try self.services.requirePermission(.manageNicknames, at: .server(r.serverID), for: s) }
            let before = self.directory.member(user, of: r.serverID)
            let decision = try self.directory.decide.setNickname(r.nickname, of: user, in: r.serverID, by: s.user)
            let member = decision.value
            var names = AuditDiff()
            names.field("nickname", before?.nickname, member.nickname)
            let audit = other ? try self.requests.audit(.memberNicknameChanged, r.serverID, by: s, target: user, changes: names.changes,
                                                   onlyIfChanged: true, reason: r.reason) : []
            guard !decision.changes.isEmpty else { return Effects(reply: .result(.member(GHMember(member)))) }
            return self.requests.effects(decision, also: audit, reply: .result(.member(GHMember(member))),
                                    notices: [Notice(.memberUpdated, .server(r.serverID, isPublic: false), actor: s.user, targeted: [user]) {
                                        $0.member = GHMember(member)
                                    }])
        }
    }
}

// MARK: Telling homes

extension Profiles {
    /// Tells `list` (of users homed here) to every home, this one included.
    func tell(_ list: [UserProfile], changed: Bool) {
        for place in services.gateway.routes.everyPlace where place != services.index {
            services.links.post(.mail(services.index, [.profiles(list, changed: changed)]), to: place)
        }
        heard(list, changed: changed)
    }

    /// A session opened here: at its user's home, the user's first one reminds every home of the profile.
    func opened(_ s: HomeSession) {
        guard isHomeOf(s.user), registry.sessions(of: s.user).count == 1, let p = profiles[s.user] else { return }
        tell([p], changed: false)
    }

    /// A home asks for the profiles of `users` homed here (it admitted them to a server): it gets them as a reminder.
    func asked(_ users: [UserID], from place: Int) {
        let list = users.compactMap { profiles[$0] }
        guard !list.isEmpty else { return }
        if place == services.index { heard(list, changed: false) } else { services.links.post(.mail(services.index, [.profiles(list, changed: false)]), to: place) }
    }

    /// A guild here admitted `user`: their home is asked for their profile, for the new member's copies.
    func admitted(_ user: UserID) {
        let place = services.place(user: user)
        if place == services.index { asked([user], from: place) } else { services.links.post(.mail(services.index, [.profilesAsked(users: [user])]), to: place) }
    }

    /// Users' homes told of profiles: the copies on members here follow, and a change is told to those here who hear the user.
    func heard(_ list: [UserProfile], changed: Bool) {
        for p in list {
            for server in directory.serverIDs(of: p.user) where directory.member(p.user, of: server)?.copying(p) != nil { copy(p, in: server) }
            guard changed else { continue }
            var n = GHSystemNotification()
            n.kind = .userUpdated
            n.actorID = p.user
            n.time = now()
            n.user = GHUserProfile(p)
            // Those who hear the user's presence, and the user's own sessions (their other devices).
            let hearers = presences.hearers(of: p.user)
            let keys = Set(hearers.map(\.key))
            (hearers + registry.sessions(of: p.user).values.filter { !keys.contains($0.key) }).push(n)
        }
    }

    /// Stores `p`'s copies on the member in `server`, in turn with the server's other changes.
    private func copy(_ p: UserProfile, in server: ServerID) {
        change(.server(server)) { [self] in
            // Left, or copied meanwhile: nothing to do.
            guard let m = directory.member(p.user, of: server)?.copying(p) else { return nil }
            // Not stored: the next reminder (the user's next login) tries again.
            var e = Effects(writes: [.directory(.memberSaved(m))])
            e.changes = [.directory([.memberSaved(m)])]
            return e
        }
    }
}

extension GHUserProfile {
    init(_ p: UserProfile) {
        self.init()
        userID = p.user
        displayName = p.displayName
        avatar = p.avatar
        updatedAt = p.updatedAt
    }
}

extension UserProfile {
    init(_ p: GHUserProfile) { self.init(user: p.userID, displayName: p.displayName, avatar: p.avatar, updatedAt: p.updatedAt) }
}
