// How a directory request's decision becomes state: its changes are
// written, and only once they are durable does the Directory take them
// (`StateChange.directory`: the Directory, then the parts that mirror it),
// then the parts that follow it (sessions, positions, subscriptions), then
// the answer and the notifications. A commit that fails
// answers 503 and changes nothing (docs/architecture.md).
//
// Because the Directory changes only on commit, two requests on one server
// decided before the first committed would both check the old state (two
// joins both admitted, a role given to a member who just left). So changes
// to one server queue behind each other (`ChangeQueue`); each decides on
// what the one before left. Other parts queue their changes the same way
// (a user's receipts). Loop thread only.

import GuildhallCore
import GuildhallStore
import GuildhallWire

/// The changes to each of some things (servers, users' receipts), one in flight at a time.
final class ChangeQueue<Key: Hashable> {
    /// Per key with a change in flight, the changes waiting for it.
    private var waiting: [Key: [() -> Void]] = [:]

    /// Runs `body` now if nothing of `key` is in flight, else after what is; `body` calls `done(key)` once settled.
    func run(_ key: Key, _ body: @escaping () -> Void) {
        if waiting[key] != nil {
            waiting[key]!.append(body)
            return
        }
        waiting[key] = []
        body()
    }

    /// The change in flight on `key` settled: the next one runs.
    func done(_ key: Key) {
        guard var queue = waiting[key] else { return }
        guard !queue.isEmpty else {
            waiting.removeValue(forKey: key)
            return
        }
        let next = queue.removeFirst()
        waiting[key] = queue
        next()
    }
}

extension HomePart {
    /// Decides and carries out a change to `key` once the changes before it
    /// settled. `decide` gets `settle` and calls it exactly once: with the
    /// effects to carry out (nil when it answered itself, a no-op); a
    /// failure it throws is the answer. `key` is nil when the request names
    /// nothing that exists (it fails on its own, without waiting).
    func change<Key: Hashable>(_ key: Key?, in queue: ChangeQueue<Key>, id: UInt64, from s: HomeSession,
                               _ decide: @escaping (_ settle: @escaping (Effects?) -> Void) throws(Failure) -> Void) {
        let carryOut = { [self] (effects: Effects?, done: @escaping () -> Void) in
            guard var effects else { return done() }
            let then = effects.then, failed = effects.failed
            effects.then = { then?(); done() }
            effects.failed = { failed?(); done() }
            runner.carryOut(effects, answering: id, to: s)
        }
        guard let key else {
            attempt(id, s) { () throws(Failure) in try decide { carryOut($0, {}) } }
            return
        }
        queue.run(key) {
            let done = { queue.done(key) }
            do throws(Failure) { try decide { carryOut($0, done) } } catch {
                s.fail(id, error)
                done()
            }
        }
    }
}

extension DirectoryRequests {
    /// A change to `server` (DirectoryRequests' form of `change(_:in:)`): `decide` returns its effects.
    func change(_ server: ServerID?, id: UInt64, from s: HomeSession, _ decide: @escaping () throws(Failure) -> Effects) {
        change(server, in: changesInFlight, id: id, from: s) { settle throws(Failure) in settle(try decide()) }
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
    /// their part (DirectoryFollowOn.swift), then the answer, the notices, then `then`.
    func effects<V>(_ decision: DirectoryDecision<V>, also writes: [StoreWrite] = [], reply: Reply,
                    notices: [Notice] = [], then: (() -> Void)? = nil) -> Effects {
        let changes = decision.changes
        var e = Effects(writes: changes.map(StoreWrite.directory) + writes, reply: reply, then: then)
        e.changes = [.directory(changes)]
        e.notices = notices
        return e
    }
}
