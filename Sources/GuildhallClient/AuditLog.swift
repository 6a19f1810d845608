// The audit log in the SDK (docs/features.md "Audit log"): a server's
// entries newest first, a page at a time, with the wire's filters.

import GuildhallWire

extension GuildhallClient.Servers {
    /// A page of `server`'s audit log (VIEW_AUDIT_LOG): entries older than
    /// `before` (0: the newest), at most `limit` (0: 50), passing every filter
    /// given. Ask again with `before: page.nextBefore` while it is not 0.
    public func auditLog(of server: UInt64, before: UInt64 = 0, limit: UInt32 = 0, actor: String = "",
                         action: GHAuditAction = .auditAny, target: String = "") async throws -> GHAuditLog {
        var r = GHGetAuditLog()
        r.serverID = server
        r.before = before
        r.limit = limit
        r.actor = actor
        r.action = action
        r.target = target
        return try await client.expect(.getAuditLog(r)) { if case .auditLog(let l) = $0 { l } else { nil } }
    }
}
