// A blocking multi-producer queue feeding one store thread: producers push,
// the thread takes everything queued at once (so it can group the work).
// A push may leave the thread asleep until its next wake-up (`wake: false`):
// the writer gathers journaled jobs that way (StoreWriter.swift), and only a
// thread that went to sleep with nothing queued must be woken for them.

import Dispatch
import Synchronization

final class JobQueue<Job: Sendable>: Sendable {
    private struct State: ~Copyable {
        var jobs: [Job] = []
        var stopping = false
        /// The thread sleeps until something is pushed (`sleepUntilPushed`): even a push that need not wake it must.
        var asleep = false
    }
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)

    func push(_ job: Job) {
        state.withLock { $0.jobs.append(job); $0.asleep = false }
        wake.signal()
    }

    /// With `wake` false the thread takes them at its next wake-up (`nudge`, `wakeIfAsleep`, or its own timeout).
    func push(contentsOf jobs: [Job], wake: Bool = true) {
        guard !jobs.isEmpty else { return }
        state.withLock { s in
            s.jobs.append(contentsOf: jobs)
            if wake { s.asleep = false }
        }
        if wake { self.wake.signal() }
    }

    /// Wakes the thread if it sleeps until pushed (what was pushed without a
    /// wake-up is not left there), or if `limit` jobs or more wait.
    func wakeIfAsleep(orHolding limit: Int = .max) {
        let wakes = state.withLock { s in
            defer { s.asleep = false }
            return s.asleep || s.jobs.count >= limit
        }
        if wakes { wake.signal() }
    }

    func stop() {
        state.withLock { $0.stopping = true }
        wake.signal()
    }

    /// Wakes the thread with nothing pushed (it has other work: a WAL restart).
    func nudge() { wake.signal() }

    /// Waits until something was pushed (or stop was asked); `take` then says what.
    func waitForWork() { wake.wait() }

    /// Waits, unless something is queued, until a push or `wakeIfAsleep` wakes the thread.
    func sleepUntilPushed() {
        let sleep = state.withLock { s in
            s.asleep = s.jobs.isEmpty && !s.stopping
            return s.asleep
        }
        if sleep { wake.wait() }
    }

    /// As `waitForWork`, for at most `seconds`.
    func waitForWork(seconds: Double) { _ = wake.wait(timeout: .now() + seconds) }

    /// Everything queued now, and whether to stop once it is done.
    func take() -> (jobs: [Job], stopping: Bool) {
        state.withLock { s in
            let jobs = s.jobs
            s.jobs = []
            s.asleep = false
            return (jobs, s.stopping)
        }
    }

    /// Waits for work; returns everything queued, and whether to stop once it is done.
    func takeAll() -> (jobs: [Job], stopping: Bool) {
        while true {
            waitForWork()
            let taken = take()
            if !taken.jobs.isEmpty || taken.stopping { return taken }
        }
    }

    var isAsleep: Bool { state.withLock { $0.asleep } }
    var isEmpty: Bool { state.withLock { $0.jobs.isEmpty } }
    var count: Int { state.withLock { $0.jobs.count } }
}
