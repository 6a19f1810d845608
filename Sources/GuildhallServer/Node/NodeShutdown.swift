// Graceful shutdown across the node's loops (SIGTERM, SIGINT or
// `ServiceHandle.stop()`), led by the first loop, in steps every loop
// takes when told:
// 1. stop accepting connections and reading requests;
// 2. once every loop's home has no commit pending (or the grace period
//    passed), every gateway tells its sessions why they close, flushes, and
//    tells every loop it closed (after the sessions' ends, in order);
// 3. once a home has heard that from every gateway, it writes what it kept
//    in memory (read positions; cursors went with the ends) and, once that
//    committed, tells the first loop;
// 4. the first loop closes the store, and every loop closes its handles.
// A drain (POST /drain) takes steps 1 to 3, with sessions told to reconnect
// elsewhere, and stops there (in a cluster the node then leaves it, its
// shards going to the others): the process stays up (not ready) until
// SIGTERM, which then only closes the store and the loops.
// Loop thread only.

import Dispatch
import GuildhallCore
import GuildhallLoop

/// Where one loop is in shutdown.
struct ShutdownState {
    /// First loop: shutdown began, and how many loops reported each step.
    var begun = false
    var quietLoops = 0
    var closedHomes = 0
    /// This loop stopped accepting, reported its home quiet, closed its sessions, and its home is closing or closed.
    var stoppedAccepting = false
    var reportedQuiet = false
    var sessionsClosed = false
    var closedGateways = 0
    var homeClosing = false
    var homeClosed = false
    /// Bounds the wait for commits in the current step.
    var deadline: LoopTimer?
    /// First loop: a drain is under way (the admin request waiting for it), or done.
    var draining = false
    var drainRequest: UInt64?
    var drained = false
    /// First loop: a shutdown asked for during a drain goes on once the drain is done.
    var stopAfterDrain = false
}

extension NodeLoop {
    /// Starts shutdown (first loop only; others forward it there).
    func beginShutdown() {
        guard index == 0 else { links.post(.shutdown, to: 0); return }
        if shutdown.drained { return finishShutdown() }
        if shutdown.draining { shutdown.stopAfterDrain = true; return }
        guard !shutdown.begun else { return }
        shutdown.begun = true
        log.info("shutting down", ["loops": links.count])
        links.broadcast(.stopAccepting)
    }

    func stopAccepting() {
        guard !shutdown.stoppedAccepting else { return }
        shutdown.stoppedAccepting = true
        gateway.stopAccepting()
        home.runner.resumesReaders = false
        log.info("stopped accepting", ["loop": index, "sessions": home.registry.count, "pending_commits": home.runner.pendingCommits])
        reportOnceCommitted(.quiet(index), "commits still pending at the shutdown deadline; closing without them")
    }

    /// A commit settled: the step waiting for commits may go on.
    func commitsSettled() {
        guard home.runner.pendingCommits == 0 else { return }
        if shutdown.stoppedAccepting { report(.quiet(index)) }
        if shutdown.homeClosing { report(.homeClosed(index)) }
    }

    /// Reports `step` to the first loop once this home has no commit pending,
    /// or at the deadline (commits normally finish in milliseconds; the grace
    /// period only bounds a stuck disk).
    private func reportOnceCommitted(_ step: LoopMessage, _ warning: String) {
        guard home.runner.pendingCommits > 0 else { return report(step) }
        startDeadline { [unowned self] in
            self.log.warn(warning, ["pending": self.home.runner.pendingCommits])
            self.report(step)
        }
    }

    /// Reports `.quiet` or `.homeClosed` to the first loop, each once.
    private func report(_ step: LoopMessage) {
        if case .quiet = step {
            guard !shutdown.reportedQuiet else { return }
            shutdown.reportedQuiet = true
        } else {
            guard !shutdown.homeClosed else { return }
            shutdown.homeClosed = true
        }
        clearDeadline()
        links.post(step, to: 0)
    }

    /// First loop: drains the node (POST /drain); false when it is draining or shutting down already.
    func beginDrain(answering id: UInt64) -> Bool {
        guard !shutdown.begun else { return false }
        shutdown.begun = true
        shutdown.draining = true
        shutdown.drainRequest = id
        log.info("draining", ["loops": links.count])
        links.broadcast(.stopAccepting)
        return true
    }

    /// First loop: a loop's home has no commit pending.
    func loopQuiet() {
        shutdown.quietLoops += 1
        if shutdown.quietLoops == links.count { links.broadcast(.closeSessions(draining: shutdown.draining)) }
    }

    func closeSessions(draining: Bool) {
        guard !shutdown.sessionsClosed else { return }
        shutdown.sessionsClosed = true
        gateway.closeAll(draining: draining)
        // After the sessions' ends, which the gateway's turn just posted.
        links.broadcast(.gatewayClosed(index))
    }

    /// A gateway closed its sessions; once all have, the home writes what it kept and closes.
    func gatewayClosed() {
        shutdown.closedGateways += 1
        guard shutdown.closedGateways == links.count else { return }
        shutdown.homeClosing = true
        home.reading.flushPositions()
        afterMessages()
        reportOnceCommitted(.homeClosed(index), "final writes still pending at the shutdown deadline")
    }

    /// What a drained inbox left once the gateway no longer turns the home's turns (its sessions closed).
    func afterMessages() {
        guard shutdown.sessionsClosed else { return }
        home.runner.submitTurnJobs()
        links.postTurn()
    }

    /// First loop: a home closed; once all have, the store closes and every loop stops.
    func homeClosed() {
        shutdown.closedHomes += 1
        guard shutdown.closedHomes == links.count else { return }
        if shutdown.draining {
            shutdown.draining = false
            shutdown.drained = true
            log.info("drained")
            // In a cluster the drained node leaves it now, not at SIGTERM: its shards go to
            // the other nodes, which serve the users homed here meanwhile. Off the loop, as
            // the leases' last round may wait on the loops.
            if let stopLeases { DispatchQueue.global().async { stopLeases() } }
            if let id = shutdown.drainRequest { admin?.answer(id, .json(200, ["drained": true])) }
            if shutdown.stopAfterDrain { finishShutdown() }
            return
        }
        finishShutdown()
    }

    /// The store closes and every loop stops.
    private func finishShutdown() {
        stopLeases?()
        closeStore?()
        log.info("shutdown complete")
        links.broadcast(.stop)
    }

    func stop() { closeHandles() }

    private func startDeadline(_ expired: @escaping () -> Void) {
        clearDeadline()
        let timer = LoopTimer(loop: loop)
        shutdown.deadline = timer
        timer.start(afterMillis: UInt64(max(100, home.settings.shutdownGraceMs)), repeatMillis: 0, expired)
    }

    private func clearDeadline() {
        shutdown.deadline?.close()
        shutdown.deadline = nil
    }
}
