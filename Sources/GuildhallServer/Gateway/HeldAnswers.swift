// Answers to acknowledgements, held for their session's next write
// (docs/performance.md, "D's acknowledgement round"). An `Ack`'s answer says
// nothing (the acknowledgement took effect as it was read) and no client waits
// on it, so it is queued without a write of its own: it leaves with whatever the
// session is written next, at the latest `holdMillis` later. A thousand
// subscribers acknowledging together then cost a thousand reads, not a thousand
// reads and a thousand writes (and the client a thousand wake-ups) between two
// events. Gateway's loop only; holds its sessions only until the timer.

import GuildhallLoop

final class HeldAnswers {
    /// The longest an answer waits for its session's next write.
    static let holdMillis: UInt64 = 10

    private var sessions: [Session] = []
    private let timer: LoopTimer
    /// Writes the turn's dirty sessions (`Gateway.flushAll`). A timer runs before the loop
    /// polls, and its flush check only after the poll returns: marked dirty and left,
    /// they would wait for the next I/O or timer.
    private let flush: () -> Void

    init(loop: EventLoop, flush: @escaping () -> Void) {
        timer = LoopTimer(loop: loop)
        self.flush = flush
    }

    /// `s` queued an answer it holds (`Session.answerHeld`): written by the
    /// time the timer runs, if nothing wrote the session before.
    func hold(_ s: Session) {
        if sessions.isEmpty { timer.start(afterMillis: Self.holdMillis, repeatMillis: 0) { [unowned self] in self.release() } }
        sessions.append(s)
    }

    /// The sessions still holding an answer join this turn's flush.
    private func release() {
        var any = false
        for s in sessions where s.answerHeld {
            s.answerHeld = false
            if s.isOpen { s.markDirty(); any = true }
        }
        sessions.removeAll(keepingCapacity: true)
        if any { flush() }
    }

    func close() {
        timer.close()
        sessions.removeAll()
    }
}
