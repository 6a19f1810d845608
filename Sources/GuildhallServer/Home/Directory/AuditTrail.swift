// The audit log at the guild's home (docs/features.md "Audit log"): the
// entry a permissioned change writes beside itself (so the two commit
// together or not at all), `GetAuditLog` read from the store, and the daily
// prune past `audit-log-retention-days`. Handlers ask `entry` for the write
// and add it to their effects; what an entry says is GuildhallCore's
// AuditLog.swift. Loop thread only.

import GuildhallCore
import GuildhallStore
import GuildhallWire

final class AuditTrail: HomePart {
    unowned let services: HomeServices
    /// When the next prune is due (home 0 prunes the node's store).
    private var nextPrune: UInt64 = 0

    init(services: HomeServices) { self.services = services }
}

extension AuditTrail {
    /// The write that records a change in `server`'s log; the reason is checked here, before anything is decided on it.
    func entry(_ action: AuditAction, in server: ServerID, by actor: UserID, target: String, channel: UInt64 = 0,
               changes: [AuditChange] = [], reason: String) throws(Failure) -> StoreWrite {
        write(AuditEntry(id: 0, serverID: server, actor: actor, action: action, target: target, channelID: channel, changes: changes,
                         reason: try AuditEntry.validReason(reason), time: 0))
    }

    /// The write that records a change the server made by itself (a ban's end): no actor, no reason.
    func serverEntry(_ action: AuditAction, in server: ServerID, target: String) -> StoreWrite {
        write(AuditEntry(id: 0, serverID: server, actor: "", action: action, target: target, time: 0))
    }

    /// `e` stamped with its id and time.
    private func write(_ e: AuditEntry) -> StoreWrite {
        var e = e
        e.time = now()
        e.id = services.newID(now: e.time, shard: nil)
        return .audited(e)
    }

    func getAuditLog(_ r: GHGetAuditLog, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            guard r.limit <= AuditQuery.maxLimit else { throw Failure.badRequest("limit must be at most \(AuditQuery.maxLimit), not \(r.limit)") }
            let action = r.action == .auditAny ? nil : AuditAction(rawValue: UInt32(r.action.rawValue))
            guard r.action == .auditAny || action != nil else { throw Failure.badRequest("unknown audit action \(r.action.rawValue)") }
            let query = AuditQuery(serverID: r.serverID, before: r.before, limit: r.limit == 0 ? AuditQuery.defaultLimit : Int(r.limit),
                                   actor: r.actor.isEmpty ? nil : r.actor, action: action, target: r.target.isEmpty ? nil : r.target)
            read(.auditLog(query)) { found in
                guard found.error == nil else { return s.fail(id, Failure(.unavailable, "storage is unavailable; retry later")) }
                var log = GHAuditLog()
                log.entries = found.audit.map(GHAuditEntry.init)
                log.nextBefore = found.hasMore ? found.audit.last?.id ?? 0 : 0
                s.respond(id, .auditLog(log))
            }
        }
    }

    /// Each tick of home 0's timer: once a day, entries past the retention go.
    func pruneIfDue() {
        let now = now()
        guard services.index == 0, now >= nextPrune else { return }
        nextPrune = now + 86_400_000
        let before = now - min(now, UInt64(settings.auditLogRetentionDays) * 86_400_000)
        commit([.pruneAuditLog(before: before)], from: nil) { _ in }  // a failure is logged by the runner; the next day tries again
    }
}

extension GHAuditEntry {
    init(_ e: AuditEntry) {
        self.init()
        id = e.id
        serverID = e.serverID
        actor = e.actor
        action = GHAuditAction(rawValue: Int(e.action.rawValue)) ?? .auditAny
        target = e.target
        channelID = e.channelID
        changes = e.changes.map { c in .with { $0.key = c.key; $0.before = c.before; $0.after = c.after } }
        reason = e.reason
        time = e.time
    }
}
