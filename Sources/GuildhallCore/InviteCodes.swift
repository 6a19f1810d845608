// Invite codes (docs/features.md "Invite links"): a short random code that
// lets whoever holds it join a server, landing in one of its channels,
// until it expires, is used up or is revoked. Codes are made by members with
// CREATE_INVITES, listed by those with MANAGE_SERVER (and by each creator,
// their own), revoked by either. Anyone logged in may look a code up (the
// server's name, icon and member count, before joining) and join by it; a
// ban still holds. A code that expired, was used up or revoked is answered
// exactly as one that never existed. The code itself is drawn by the caller
// (`InviteCode.draw`), so these decisions stay pure.

/// One invite code.
public struct InviteCode: Sendable, Codable, Equatable {
    public var code: String
    public var serverID: ServerID
    /// Where a newcomer lands.
    public var channelID: ChannelID
    public var creator: UserID
    public var createdAt: UInt64
    /// 0: never.
    public var expiresAt: UInt64
    /// 0: no limit.
    public var maxUses: UInt32
    public var uses: UInt32

    public init(code: String, serverID: ServerID, channelID: ChannelID, creator: UserID, createdAt: UInt64, expiresAt: UInt64 = 0,
                maxUses: UInt32 = 0, uses: UInt32 = 0) {
        self.code = code; self.serverID = serverID; self.channelID = channelID; self.creator = creator
        self.createdAt = createdAt; self.expiresAt = expiresAt; self.maxUses = maxUses; self.uses = uses
    }

    /// Whether it may still be used at `now`.
    public func isLive(at now: UInt64) -> Bool { (expiresAt == 0 || now < expiresAt) && (maxUses == 0 || uses < maxUses) }

    /// Letters and digits a person can read aloud (no 0/O, 1/l/I).
    static let alphabet = Array("23456789abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ")
    public static let length = 8

    /// A new code: 8 of 57 symbols, about 47 bits, so guessing one is hopeless.
    public static func draw<R: RandomNumberGenerator>(using random: inout R) -> String {
        String((0..<length).map { _ in alphabet[Int(random.next(upperBound: UInt64(alphabet.count)))] })
    }

    public static let maxPerServer = 1_000
    public static let maxAgeSeconds: UInt64 = 365 * 86_400
}

extension Directory {
    /// The live code `code`, at `now`; nil when there is none here, or it expired or is used up.
    public func inviteCode(_ code: String, at now: UInt64) -> InviteCode? {
        guard let server = codeServers[code], let c = servers[server]?.codes[code], c.isLive(at: now) else { return nil }
        return c
    }

    /// The server's live codes, newest first.
    public func inviteCodes(of server: ServerID, at now: UInt64) -> [InviteCode] {
        (servers[server]?.codes.values.filter { $0.isLive(at: now) } ?? []).sorted { ($0.createdAt, $0.code) > ($1.createdAt, $1.code) }
    }

    static func codeNotFound(_ code: String) -> Failure { .notFound("invite \(code) not found, or expired") }
}

extension DirectoryDecisions {
    /// A new code for `server` by `actor` (who holds CREATE_INVITES there), landing in `channel` (0: the
    /// server's first channel the actor may view).
    public func createInviteCode(_ code: String, server: ServerID, channel: ChannelID, by actor: UserID, now: UInt64,
                                 maxAgeSeconds: UInt64, maxUses: UInt32) throws(Failure) -> DirectoryDecision<InviteCode> {
        _ = try d.seen(by: actor).server(server)
        guard maxAgeSeconds <= InviteCode.maxAgeSeconds else { throw Failure.badRequest("max_age_seconds is at most \(InviteCode.maxAgeSeconds) (a year)") }
        let landing: ChannelRecord
        if channel == 0 {
            guard let first = try d.seen(by: actor).channels(of: server).first else {
                throw Failure.badRequest("server \(server) has no channel to land in; create one first")
            }
            landing = first
        } else {
            landing = try d.seen(by: actor).channel(channel)
            guard landing.serverID == server else { throw Directory.channelNotFound(channel) }
        }
        guard d.inviteCodes(of: server, at: now).count < InviteCode.maxPerServer else {
            throw Failure(.limitReached, "server \(server) has \(InviteCode.maxPerServer) live invite codes; revoke some first")
        }
        guard d.codeServers[code] == nil else { throw Failure.conflict("that code is taken; ask again") }
        let c = InviteCode(code: code, serverID: server, channelID: landing.id, creator: actor, createdAt: now,
                           expiresAt: maxAgeSeconds == 0 ? 0 : now + maxAgeSeconds * 1_000, maxUses: maxUses)
        return DirectoryDecision(c, [.inviteCodeSaved(c)])
    }

    /// Revokes a code: its creator, or a member with MANAGE_SERVER (`manages`).
    public func revokeInviteCode(_ code: String, by actor: UserID, now: UInt64, manages: (ServerID) -> Bool) throws(Failure) -> DirectoryDecision<InviteCode> {
        // A code of a server the actor is not in is answered as one that does not exist.
        guard let c = d.inviteCode(code, at: now), d.member(actor, of: c.serverID) != nil else { throw Directory.codeNotFound(code) }
        guard c.creator == actor || manages(c.serverID) else {
            throw Failure.forbidden("only its creator or a member with MANAGE_SERVER may revoke invite \(code)")
        }
        return DirectoryDecision(c, [.inviteCodeRemoved(c.serverID, code)])
    }

    /// `user` joins by a code: a use is counted (the code goes with its last use); a ban holds.
    public func joinByInviteCode(_ code: String, user: UserID, now: UInt64) throws(Failure) -> DirectoryDecision<(InviteCode, MemberRecord)> {
        guard var c = d.inviteCode(code, at: now) else { throw Directory.codeNotFound(code) }
        guard let s = d.servers[c.serverID] else { throw Directory.codeNotFound(code) }
        if s.members[user] != nil { throw Failure.conflict("already a member of server \(c.serverID)") }
        if s.bans[user] != nil { throw Failure.forbidden("you are banned from server \(c.serverID)") }
        c.uses += 1
        let m = MemberRecord(serverID: c.serverID, userID: user, role: .member, joinedAt: now)
        let use: DirectoryChange = c.isLive(at: now) ? .inviteCodeSaved(c) : .inviteCodeRemoved(c.serverID, code)
        var changes: [DirectoryChange] = [.memberSaved(m), use]
        if s.invites[user] != nil { changes.append(.inviteRemoved(c.serverID, user)) }
        return DirectoryDecision((c, m), changes)
    }
}
