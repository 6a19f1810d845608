// Who is online, and the interest index of this stage: server -> online
// member sessions, user -> sessions. Loop thread only.
//
// Fan-out reads these maps; it never scans members, so a send costs what it
// delivers (docs/architecture.md). Membership changes update the index in step with the
// Directory.

import GuildhallCore

final class SessionRegistry {
    private(set) var all: [UInt64: HomeSession] = [:]
    /// The same sessions, lent: fan-out borrows each recipient through this
    /// without a retain and release per delivery (`all` keeps them alive),
    /// and finds it without hashing the key (`SessionTable`).
    private(set) var lent = SessionTable<Unmanaged<HomeSession>>()
    private var byUser: [UserID: FewByKey<HomeSession>] = [:]
    private var onlineByServer: [ServerID: [UInt64: HomeSession]] = [:]
    private var guestsByServer: [ServerID: [UInt64: HomeSession]] = [:]
    /// Online members' sessions that joined or left a server's index since the last
    /// `takeMemberChanges()`, in order: what the gateways' halves of the interest follow.
    private var memberChanges: [MemberInterestChange] = []

    func takeMemberChanges() -> [MemberInterestChange] {
        guard !memberChanges.isEmpty else { return [] }
        defer { memberChanges.removeAll(keepingCapacity: true) }
        return memberChanges
    }

    private func changed(_ s: HomeSession, _ server: ServerID, member: Bool) {
        memberChanges.append(MemberInterestChange(session: s.key, user: s.user, server: server, member: member))
    }

    var count: Int { all.count }

    func add(_ s: HomeSession) {
        all[s.key] = s
        lent[s.key] = Unmanaged.passUnretained(s)
    }

    func sessions(of user: UserID) -> FewByKey<HomeSession> { byUser[user] ?? FewByKey() }

    func onlineMembers(of server: ServerID) -> [UInt64: HomeSession] { onlineByServer[server] ?? [:] }

    func isOnlineMember(_ key: UInt64, of server: ServerID) -> Bool { onlineByServer[server]?[key] != nil }

    /// Registers a logged-in session under its user and the user's servers.
    func loggedIn(_ s: HomeSession, servers: Set<ServerID>) {
        byUser[s.user, default: FewByKey()][s.key] = s
        for id in servers {
            onlineByServer[id, default: [:]][s.key] = s
            changed(s, id, member: true)
        }
    }

    func guests(of server: ServerID) -> [UInt64: HomeSession] { guestsByServer[server] ?? [:] }

    func guestEntered(_ s: HomeSession, server: ServerID) {
        s.guestOf.insert(server)
        guestsByServer[server, default: [:]][s.key] = s
    }

    func guestLeft(_ s: HomeSession, server: ServerID) {
        s.guestOf.remove(server)
        guestsByServer[server]?[s.key] = nil
        if guestsByServer[server]?.isEmpty == true { guestsByServer.removeValue(forKey: server) }
    }

    /// Forgets a session; `servers` are its user's servers.
    func remove(_ s: HomeSession, servers: Set<ServerID>) {
        all.removeValue(forKey: s.key)
        lent[s.key] = nil
        for server in s.guestOf { guestLeft(s, server: server) }
        guard !s.user.isEmpty, byUser[s.user]?[s.key] != nil else { return }
        byUser[s.user]![s.key] = nil
        if byUser[s.user]!.isEmpty { byUser.removeValue(forKey: s.user) }
        for id in servers where onlineByServer[id]?.removeValue(forKey: s.key) != nil {
            if onlineByServer[id]?.isEmpty == true { onlineByServer.removeValue(forKey: id) }
            changed(s, id, member: false)
        }
    }

    func joined(_ user: UserID, server: ServerID) {
        for (key, s) in sessions(of: user) where onlineByServer[server, default: [:]].updateValue(s, forKey: key) == nil {
            changed(s, server, member: true)
        }
    }

    func left(_ user: UserID, server: ServerID) {
        for (key, s) in sessions(of: user) where onlineByServer[server]?.removeValue(forKey: key) != nil { changed(s, server, member: false) }
        if onlineByServer[server]?.isEmpty == true { onlineByServer.removeValue(forKey: server) }
    }

    func serverDeleted(_ server: ServerID) {
        for s in (onlineByServer.removeValue(forKey: server) ?? [:]).values { changed(s, server, member: false) }
    }
}

/// An online member's session entered or left a server's part of the index.
struct MemberInterestChange {
    let session: UInt64
    let user: UserID
    let server: ServerID
    let member: Bool
}
