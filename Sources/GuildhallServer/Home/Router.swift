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
            do throws(Failure) { try services.requirePermission(rule.needs, at: scope, for: s) } catch {
                s.fail(id, error)
                return
            }
        }
        rule.handle?(self, id, s)
    }
}
