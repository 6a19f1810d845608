// Who is online, and the interest index of this stage: server -> online
// member sessions, user -> sessions. Loop thread only.
//
// Fan-out reads these maps; it never scans members, so a send costs what it
// delivers (DESIGN §4). Membership changes update the index in step with the
// Directory.

import GuildhallCore

final class SessionRegistry {
    private(set) var all: [UInt64: HomeSession] = [:]
    /// The same sessions, lent: fan-out borrows each recipient through this
    /// without a retain and release per delivery (`all` keeps them alive),
    /// and finds it without hashing the key (`SessionTable`).
    private(set) var lent = SessionTable<Unmanaged<HomeSession>>()
    private var byUser: [UserID: [UInt64: HomeSession]] = [:]
    private var onlineByServer: [ServerID: [UInt64: HomeSession]] = [:]
    private var guestsByServer: [ServerID: [UInt64: HomeSession]] = [:]

    var count: Int { all.count }

    func add(_ s: HomeSession) {
        all[s.key] = s
        lent[s.key] = Unmanaged.passUnretained(s)
    }

    func sessions(of user: UserID) -> [UInt64: HomeSession] { byUser[user] ?? [:] }

    func onlineMembers(of server: ServerID) -> [UInt64: HomeSession] { onlineByServer[server] ?? [:] }

    /// Registers a logged-in session under its user and the user's servers.
    func loggedIn(_ s: HomeSession, servers: Set<ServerID>) {
        byUser[s.user, default: [:]][s.key] = s
        for id in servers { onlineByServer[id, default: [:]][s.key] = s }
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
        for id in servers {
            onlineByServer[id]?[s.key] = nil
            if onlineByServer[id]?.isEmpty == true { onlineByServer.removeValue(forKey: id) }
        }
    }

    func joined(_ user: UserID, server: ServerID) {
        for (key, s) in sessions(of: user) { onlineByServer[server, default: [:]][key] = s }
    }

    func left(_ user: UserID, server: ServerID) {
        for key in sessions(of: user).keys { onlineByServer[server]?[key] = nil }
        if onlineByServer[server]?.isEmpty == true { onlineByServer.removeValue(forKey: server) }
    }

    func serverDeleted(_ server: ServerID) { onlineByServer.removeValue(forKey: server) }
}
