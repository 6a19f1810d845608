// How a directory request's decision becomes state: its changes are
// written, and only once they are durable does the Directory take them
// (`Directory.apply`), then the parts that follow it (sessions, positions,
// subscriptions), then the answer and the notifications. A commit that fails
// answers 503 and changes nothing (docs/architecture.md).
//
// Because the Directory changes only on commit, two requests on one server
// decided before the first committed would both check the old state (two
// joins both admitted, a role given to a member who just left). So changes
// to one server queue behind each other (`ServerChangeQueue`); each decides
// on what the one before left. Loop thread only.

import GuildhallCore
import GuildhallStore
import GuildhallWire

/// The directory changes of each server, one in flight at a time.
final class ServerChangeQueue {
    /// Per server with a change in flight, the changes waiting for it.
    private var waiting: [ServerID: [() -> Void]] = [:]

    /// Runs `body` now if nothing of `server` is in flight, else after what is; `body` calls `done` once settled.
    func run(_ server: ServerID, _ body: @escaping () -> Void) {
        if waiting[server] != nil {
            waiting[server]!.append(body)
            return
        }
        waiting[server] = []
        body()
    }

    /// The change in flight on `server` settled: the next one runs.
    func done(_ server: ServerID) {
        guard var queue = waiting[server] else { return }
        guard !queue.isEmpty else {
            waiting.removeValue(forKey: server)
            return
        }
        let next = queue.removeFirst()
        waiting[server] = queue
        next()
    }
}

extension DirectoryRequests {
    /// Decides and carries out a change to `server` once the changes before
    /// it settled; `server` is nil when the request names nothing that exists
    /// (it fails on its own, without waiting).
    func change(_ server: ServerID?, id: UInt64, from s: HomeSession, _ decide: @escaping () throws(Failure) -> Effects) {
        guard let server else {
            attempt(id, s) { () throws(Failure) in runner.carryOut(try decide(), answering: id, to: s) }
            return
        }
        changesInFlight.run(server) { [self] in
            let done = { [self] in changesInFlight.done(server) }
            var effects: Effects
            do throws(Failure) { effects = try decide() } catch {
                s.fail(id, error)
                return done()
            }
            let then = effects.then, failed = effects.failed
            effects.then = { then?(); done() }
            effects.failed = { failed?(); done() }
            runner.carryOut(effects, answering: id, to: s)
        }
    }

    /// The effects of a decision: its changes written with `also`; once
    /// durable the Directory takes them, then `applied` runs, then the answer, then `then`.
    func effects<V>(_ decision: DirectoryDecision<V>, also writes: [StoreWrite] = [], reply: @escaping () -> GHResponse.OneOf_Result,
                    applied: (() -> Void)? = nil, then: (() -> Void)? = nil) -> Effects {
        let changes = decision.changes
        return Effects(writes: changes.map(StoreWrite.directory) + writes, reply: reply, apply: { [home] _ in
            home.directory.apply(changes)
            applied?()
        }, then: then)
    }
}
