// Delivering events: encode once, queue the shared bytes on each recipient
// session. Recipients come from the interest index, so the cost is
// O(recipients). At this stage (before subscriptions) a server's events go
// to every online member session; targeted users get theirs whatever their
// membership. Each session receives an event once. Loop thread only.

import GuildhallCore
import GuildhallWire

extension GuildhallService {
    /// Sends `body` to the online members of `server` and to every session
    /// of `alsoUsers`, except the session `except`.
    func deliver(_ body: GHEvent.OneOf_Body, toServer server: ServerID?, alsoUsers: [UserID] = [], except: Session? = nil) {
        let payload = body.sharedPayload
        var seen: Set<UInt64> = []
        if let server {
            for (key, s) in registry.onlineMembers(of: server) where key != except?.key {
                s.push(event: payload)
                if !alsoUsers.isEmpty { seen.insert(key) }
            }
        }
        for user in alsoUsers {
            for (key, s) in registry.sessions(of: user) where key != except?.key && !seen.contains(key) {
                s.push(event: payload)
                seen.insert(key)
            }
        }
    }

    /// A system notification about `server`, to its online members (and `alsoUsers`).
    func notify(_ kind: GHNotificationKind, server: ServerID, actor: UserID, alsoUsers: [UserID] = [],
                fill: (inout GHSystemNotification) -> Void = { _ in }) {
        var n = GHSystemNotification()
        n.kind = kind
        n.serverID = server
        n.actorID = actor
        n.time = now()
        fill(&n)
        deliver(.notification(n), toServer: server, alsoUsers: alsoUsers)
    }
}
