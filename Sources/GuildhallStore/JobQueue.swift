// A blocking multi-producer queue feeding one store thread: producers push,
// the thread takes everything queued at once (so it can group the work).

import Dispatch
import Synchronization

final class JobQueue<Job: Sendable>: Sendable {
    private struct State: ~Copyable {
        var jobs: [Job] = []
        var stopping = false
    }
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)

    func push(_ job: Job) {
        state.withLock { $0.jobs.append(job) }
        wake.signal()
    }

    /// With `wake` false the thread takes them at its next wake-up (`nudge`).
    func push(contentsOf jobs: [Job], wake: Bool = true) {
        guard !jobs.isEmpty else { return }
        state.withLock { $0.jobs.append(contentsOf: jobs) }
        if wake { self.wake.signal() }
    }

    func stop() {
        state.withLock { $0.stopping = true }
        wake.signal()
    }

    /// Wakes the thread with nothing pushed (it has other work: a WAL restart).
    func nudge() { wake.signal() }

    /// Waits until something was pushed (or stop was asked); `take` then says what.
    func waitForWork() { wake.wait() }

    /// As `waitForWork`, for at most `seconds`.
    func waitForWork(seconds: Double) { _ = wake.wait(timeout: .now() + seconds) }

    /// Everything queued now, and whether to stop once it is done.
    func take() -> (jobs: [Job], stopping: Bool) {
        state.withLock { s in
            let jobs = s.jobs
            s.jobs = []
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

    var isEmpty: Bool { state.withLock { $0.jobs.isEmpty } }
    var count: Int { state.withLock { $0.jobs.count } }
}
