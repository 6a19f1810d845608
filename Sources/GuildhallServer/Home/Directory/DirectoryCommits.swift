// How a directory request's decision becomes state: its changes are
// written, and only once they are durable does the Directory take them
// (`StateChange.directory`: the Directory, then the parts that mirror it),
// then the parts that follow it (sessions, positions, subscriptions), then
// the answer and the notifications. A commit that fails
// answers 503 and changes nothing (docs/architecture.md).
//
// Because the Directory changes only on commit, the changes to one server
// take turns (ChangeTurns.swift); each decides on what the one before left.
// Loop thread only.

import GuildhallCore
import GuildhallStore
import GuildhallWire

extension HomePart {
    /// Decides and carries out a change in `slot`'s turn, once the changes
    /// before it settled. `decide` gets `settle` and calls it exactly once:
    /// with the effects to carry out (nil when it answered itself, a no-op);
    /// a failure it throws is the answer. `slot` is nil when the request
    /// names nothing that exists (it fails on its own, without waiting).
    func change(_ slot: ChangeSlot?, id: UInt64, from s: HomeSession,
                _ decide: @escaping (_ settle: @escaping (Effects?) -> Void) throws(Failure) -> Void) {
        let runner = runner, turns = runner.turns
        guard let slot else {
            attempt(id, s) { () throws(Failure) in try decide { if let e = $0 { runner.carryOut(e, answering: id, to: s) } } }
            return
        }
        turns.run(slot) {
            do throws(Failure) {
                try decide {
                    guard var effects = $0 else { return turns.done(slot) }
                    effects.turn = slot
                    runner.carryOut(effects, answering: id, to: s)
                }
            } catch {
                s.fail(id, error)
                turns.done(slot)
            }
        }
    }

    /// A change the home makes by itself (no request waits on it) in `slot`'s
    /// turn: `decide` returns its effects, or nil when nothing is left to do.
    func change(_ slot: ChangeSlot, _ decide: @escaping () -> Effects?) {
        let runner = runner
        runner.turns.run(slot) {
            guard var effects = decide() else { return runner.turns.done(slot) }
            effects.turn = slot
            runner.carryOut(effects)
        }
    }
}

extension DirectoryRequests {
    /// A change to `server` (DirectoryRequests' form of `change(_:in:)`): `decide` returns its effects.
    func change(_ server: ServerID?, id: UInt64, from s: HomeSession, _ decide: @escaping () throws(Failure) -> Effects) {
        change(server.map(ChangeSlot.server), id: id, from: s) { settle throws(Failure) in settle(try decide()) }
    }

    /// The audit entry of a change made with a permission in `server`
    /// (AuditTrail.swift); with `onlyIfChanged`, none when `changes` is empty.
    /// The reason is checked either way.
    func audit(_ action: AuditAction, _ server: ServerID, by s: HomeSession, target: String, channel: UInt64 = 0,
               changes: [AuditChange] = [], onlyIfChanged: Bool = false, reason: String) throws(Failure) -> [StoreWrite] {
        let entry = try auditTrail.entry(action, in: server, by: s.user, target: target, channel: channel, changes: changes, reason: reason)
        return onlyIfChanged && changes.isEmpty ? [] : [entry]
    }

    /// The effects of a decision: its changes written with `also`; once
    /// durable the Directory takes them and the parts that follow it do
    /// their part (DirectoryFollowOn.swift), then the answer, the notices, then the follow-ups.
    func effects<V>(_ decision: DirectoryDecision<V>, also writes: [StoreWrite] = [], reply: Reply,
                    notices: [Notice] = [], followUps: [FollowUp] = []) -> Effects {
        let changes = decision.changes
        var e = Effects(writes: changes.map(StoreWrite.directory) + writes, reply: reply, followUps: followUps)
        e.changes = [.directory(changes)]
        e.notices = notices
        return e
    }
}
