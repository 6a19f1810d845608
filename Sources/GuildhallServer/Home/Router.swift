// A request at its home: the request table's permission check, then the
// row's handler. Loop thread only; the session is logged in and the
// gateway's checks (phase, rate) have passed.

import GuildhallCore
import GuildhallStore
import GuildhallWire

extension Home {
    /// `rule`: the request's row, built once where the request arrived.
    func route(_ rule: RequestRule, id: UInt64, from s: HomeSession) {
        loop.assertOnLoop()
        if !rule.needs.isEmpty, let scope = rule.scope {
            do throws(Failure) { try requirePermission(rule.needs, at: scope, for: s) } catch {
                s.fail(id, error)
                return
            }
        }
        rule.handle?(self, id, s)
    }

    /// The one permission check, before any handler: the request table names
    /// the bits, handlers add the ones their content needs (a send's
    /// mentions). A guest is never a member: read-only where it may look.
    func requirePermission(_ needed: Permission, at scope: PermissionScope, for s: HomeSession) throws(Failure) {
        let server: ServerID? = switch scope {
        case .server(let id): id
        case .channel(let id): directory.serverID(ofChannel: id)
        }
        if let server, s.guestOf.contains(server) { throw Failure.forbidden("guests are read-only in server \(server)") }
        try directory.require(needed, of: s.user, at: scope)
    }
}
