// The frames a gateway coalesces per session: typing (TypingFrames.swift) and
// presence (PresenceFrames.swift). What each session is owed lives in the
// session; this keeps which sessions wait for their interval to pass, so a
// timer can flag them again, and emits a due frame at flush. Touches the
// sessions it is given; loop thread only.

import GuildhallCore
import Prometheus

/// What a flush decides frames by, read once per turn.
struct FramePacing {
    var now: UInt64
    var typingIntervalMs: UInt64
    var presenceIntervalMs: UInt64
    /// Past this many queued bytes a session is behind: typing is shed, presence waits.
    var shedBytes: Int

    init(_ settings: Settings, now: UInt64) {
        self.now = now
        typingIntervalMs = UInt64(settings.typingFrameIntervalMs)
        presenceIntervalMs = UInt64(settings.presenceFrameIntervalMs)
        shedBytes = settings.outboundShedBytes
    }
}

final class CoalescedFrames {
    /// Sessions owed a typing frame that has to wait for its interval.
    var typingWaiting: Set<UInt64> = []
    /// Sessions owed a presence frame that has to wait.
    var presenceWaiting: Set<UInt64> = []
    /// Typer lists dropped for sessions that could not take them.
    let shed: Counter

    init(shed: Counter) { self.shed = shed }

    /// Both frames a session may be owed, at its flush.
    func emit(_ s: Session, _ pacing: FramePacing) {
        emitTyping(s, pacing)
        emitPresence(s, pacing)
    }

    /// The timer: sessions whose frames had to wait try again (`session` finds them; gone ones are forgotten).
    func retry(_ session: (UInt64) -> Session?) {
        for key in typingWaiting {
            if let s = session(key) { s.markDirty() } else { typingWaiting.remove(key) }
        }
        for key in presenceWaiting {
            if let s = session(key) { s.markDirty() } else { presenceWaiting.remove(key) }
        }
    }
}
