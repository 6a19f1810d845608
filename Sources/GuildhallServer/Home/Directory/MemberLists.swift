// Member lists (docs/features.md "Member lists"), at the guild's home: pages
// of a server's members in list order (MemberOrder), filtered by role, to
// those online or by a name search, with the member and online counts, and the windows sessions
// watch, as Discord's lazy member list does: a session that watched a page
// is told of joins, leaves and role changes inside it (`MemberListUpdate`)
// and hears the presence of the members in it.
//
// A server's order is built when it is first listed, a large server's (past
// the small-server threshold) when it is loaded, so that no member pane of a
// big community waits for a sort (100k members: about 90 ms); each is kept in
// step with every committed directory change after that (`applied`); a change
// to the roles' positions or the owner rebuilds it. Online means "not offline as
// the user's home told every home" (Presences.shown).
// Loop thread only.

import GuildhallCore
import GuildhallLoop
import GuildhallWire

final class MemberLists: HomePart {
    unowned let services: HomeServices
    /// Who is online, as the users' homes told (what a page shows and counts).
    private unowned let presences: Presences
    private var orders: [ServerID: MemberOrder] = [:]
    /// The windows watched, by server and session, and the servers each session watches.
    private var windows: [ServerID: [SessionKey: MemberWindow]] = [:]
    private var watchedBy: [SessionKey: Set<ServerID>] = [:]

    static let defaultPage = 100
    static let maxPage = 1_000

    init(services: HomeServices, presences: Presences) {
        self.services = services
        self.presences = presences
    }

    private func key(_ m: MemberRecord) -> MemberListKey { MemberListKey(m, in: directory) }

    /// Builds the orders of the large servers among `servers` (just loaded).
    func prepare(_ servers: [ServerID]) {
        for id in servers where !directory.isSmall(id) { _ = order(of: id) }
    }

    private func order(of server: ServerID) -> MemberOrder {
        if let o = orders[server] { return o }
        let o = MemberOrder(of: server, in: directory)
        orders[server] = o
        return o
    }

    private func presence(of user: UserID) -> GHPresence {
        presences.shown[user] ?? GHPresence.with { $0.userID = user; $0.status = .presenceOffline }
    }

    /// The server's members who are not offline: the smaller of the users
    /// not offline anywhere and the server's members is walked, never both.
    private func online(in server: ServerID) -> [UserID] {
        let shown = presences.shown
        guard let members = directory.memberIDs(of: server) else { return [] }
        if shown.count < members.count { return shown.keys.filter { directory.member($0, of: server) != nil } }
        return members.filter { shown[$0] != nil }
    }

    /// How many of them there are, without listing them.
    private func onlineCount(in server: ServerID) -> Int {
        let shown = presences.shown
        guard let members = directory.memberIDs(of: server) else { return 0 }
        if shown.count < members.count { return shown.keys.reduce(0) { $0 + (directory.member($1, of: server) != nil ? 1 : 0) } }
        return members.reduce(0) { $0 + (shown[$1] != nil ? 1 : 0) }
    }

    private func entry(_ user: UserID, in server: ServerID) -> GHMember? {
        guard let m = directory.member(user, of: server) else { return nil }
        var e = GHMember(m)
        e.presence = presence(of: user)
        e.timeoutUntil = directory.timedOut(user, in: server, at: now()) ?? 0
        return e
    }
}

// MARK: Requests

extension MemberLists {
    func list(_ r: GHListMembers, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            _ = try directory.seen(by: s.user).server(r.serverID)
            if r.stopWatching {
                unwatch(r.serverID, by: s.key)
                return s.respond(id, .ok(GHOk()))
            }
            let limit = r.limit == 0 ? Self.defaultPage : Int(r.limit)
            guard limit <= Self.maxPage else { throw Failure(.limitReached, "a page holds at most \(Self.maxPage) members") }
            var cursor: MemberListKey?
            if !r.cursor.isEmpty {
                guard let c = MemberListKey(cursor: r.cursor) else { throw Failure.badRequest("cursor is not one a member list gave") }
                cursor = c
            }
            let server = r.serverID, role = r.roleID, query = r.query.lowercased()
            guard query.count <= 100 else { throw Failure.badRequest("a member search is at most 100 characters") }
            guard query.isEmpty || !r.watch else { throw Failure.badRequest("a member search is not watched") }
            func holdsRole(_ k: MemberListKey) -> Bool {
                (role == 0 || directory.member(k.user, of: server)?.roles.contains(role) == true) && (query.isEmpty || Self.matches(k, query))
            }
            let (keys, next): ([MemberListKey], MemberListKey?) = if r.onlineOnly {
                // Only the online ones: sorted on their own, never a walk past the offline.
                MemberOrder(online(in: server).compactMap { order(of: server).key(of: $0) }).page(after: cursor, limit: limit, where: holdsRole)
            } else {
                order(of: server).page(after: cursor, limit: limit, where: holdsRole)
            }
            var list = GHMemberList()
            list.members = keys.compactMap { entry($0.user, in: server) }
            list.nextCursor = next?.cursor ?? ""
            list.memberCount = UInt32(clamping: directory.memberCount(server))
            list.onlineCount = UInt32(clamping: onlineCount(in: server))
            if r.watch {
                windows[server, default: [:]][s.key] = MemberWindow(from: cursor, through: next.flatMap { _ in keys.last }, role: role, onlineOnly: r.onlineOnly)
                watchedBy[s.key, default: []].insert(server)
            }
            s.respond(id, .members(list))
        }
    }

    /// A search's match (`query` lowercased): a word of the shown name, or the id, starts with it.
    static func matches(_ k: MemberListKey, _ query: String) -> Bool {
        k.name.hasPrefix(query) || k.user.lowercased().hasPrefix(query) || k.name.split(separator: " ").contains { $0.hasPrefix(query) }
    }

    private func unwatch(_ server: ServerID, by key: SessionKey) {
        windows[server]?[key] = nil
        if windows[server]?.isEmpty == true { windows[server] = nil }
        watchedBy[key]?.remove(server)
        if watchedBy[key]?.isEmpty == true { watchedBy[key] = nil }
    }

    /// A session ended: its windows go.
    func closed(_ key: SessionKey) {
        for server in watchedBy[key] ?? [] { unwatch(server, by: key) }
    }
}

// MARK: Keeping in step

extension MemberLists {
    /// Directory changes just committed and applied: orders follow, and the windows they touch are told.
    func applied(_ changes: [DirectoryChange]) {
        var rebuild: Set<ServerID> = []
        for c in changes {
            switch c {
            case .memberSaved(let m):
                guard orders[m.serverID] != nil, !rebuild.contains(m.serverID) else { continue }
                // Told even when its place is the same: its roles, nickname or profile may have changed.
                let now = key(m)
                let before = orders[m.serverID]!.set(now)
                tell(m.serverID, user: m.userID, before: before, now: now, kind: before == nil ? .memberJoined : .memberUpdated)
            case .memberRemoved(let server, let user):
                for s in registry.sessions(of: user).values { unwatch(server, by: s.key) }
                guard orders[server] != nil, !rebuild.contains(server), let before = orders[server]!.remove(user) else { continue }
                tell(server, user: user, before: before, now: nil, kind: .memberLeft)
            case .roleSaved(let r): rebuild.insert(r.serverID)
            case .roleDeleted(let server, _): rebuild.insert(server)
            case .serverSaved(let r): rebuild.insert(r.id)
            case .serverDeleted(let id):
                orders[id] = nil
                for key in windows.removeValue(forKey: id)?.keys ?? [:].keys { watchedBy[key]?.remove(id) }
            default: continue
            }
        }
        for server in rebuild where orders.removeValue(forKey: server) != nil && (windows[server] != nil || !directory.isSmall(server)) {
            _ = order(of: server)
        }
    }

    /// Windows of `server` (those `only` picks) a member moved in, out of or within hear of it.
    private func tell(_ server: ServerID, user: UserID, before: MemberListKey?, now: MemberListKey?, kind: GHMemberListUpdate.Kind,
                      only: (MemberWindow) -> Bool = { _ in true }) {
        guard let watching = windows[server], !watching.isEmpty else { return }
        var update = GHMemberListUpdate()
        update.serverID = server
        update.kind = kind
        update.member = entry(user, in: server) ?? GHMember.with { $0.serverID = server; $0.userID = user }
        update.memberCount = UInt32(clamping: directory.memberCount(server))
        let shown = presences.shown[user] != nil
        var payload: SharedBytes?
        for (key, w) in watching where only(w) {
            let was = before.map(w.covers) ?? false
            var inside = now.map(w.covers) ?? false
            if inside && w.role != 0 { inside = update.member.roleIds.contains(w.role) }
            if inside && w.onlineOnly { inside = shown }
            guard was || inside, let s = registry.all[key] else { continue }
            if update.inWindow != inside || payload == nil {
                update.inWindow = inside
                update.onlineCount = UInt32(clamping: onlineCount(in: server))
                payload = GHEvent.OneOf_Body.memberList(update).sharedPayload
            }
            s.push(event: payload!)
        }
    }

    /// A user's presence changed (Presences.heard): the windows of the user's servers here that hold them hear it,
    /// and a list of online members only is told the member came or went.
    func presenceChanged(_ p: GHPresence, owe: (HomeSession, GHPresence) -> Void) {
        for server in directory.serverIDs(of: p.userID) {
            guard let watching = windows[server], let k = orders[server]?.key(of: p.userID) else { continue }
            for (key, w) in watching where w.covers(k) {
                guard let s = registry.all[key] else { continue }
                owe(s, p)
            }
            // `shown` already holds the change: a list of online members only sees the member come or go.
            if watching.values.contains(where: \.onlineOnly) { tell(server, user: p.userID, before: k, now: k, kind: .memberUpdated, only: \.onlineOnly) }
        }
    }
}
