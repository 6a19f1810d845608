// Presence frames and idle sessions (docs/features.md "Presence"), at the
// session's gateway.
//
// Frames: homes send each presence change to each session that hears it
// (`SessionPort.presence`), from several homes at once when the session hears
// a user more than one way; the session keeps the latest state per user, and
// at most one frame per `presence-frame-interval-ms` carries them all. A
// session that cannot take a frame now (behind on its writes, detached,
// still logging in) gets none now; unlike typing, what it is owed stays,
// since it is state, and it cannot grow past one entry per user it hears.
//
// Idle: a logged-in session without a request other than its upkeep
// (heartbeats, acknowledgements) for `presence-idle-seconds` is taken as
// idle; its next such request makes it active again. Either way the
// gateway tells the user's home as if the session had sent `SetIdle`
// (SubscriptionCarry.swift: a request the gateway makes for its session).
// Frames: `CoalescedFrames`; idle: `GatewayRequests` (requests the gateway
// makes for its sessions). Both touch only the sessions they are given.
// Loop thread only.

import GuildhallCore
import GuildhallWire

/// The presence a session is owed, and when its last frame went out. Pure.
struct PresenceOwed {
    /// The latest per user, in the order users first changed.
    private var latest: [UserID: GHPresence] = [:]
    private var order: [UserID] = []
    private(set) var lastFrameAt: UInt64?

    var isEmpty: Bool { order.isEmpty }

    mutating func offer(_ list: [GHPresence]) {
        for p in list {
            if latest.updateValue(p, forKey: p.userID) == nil { order.append(p.userID) }
        }
    }

    /// The frame due at `now`, if any; what it carries is no longer owed.
    mutating func take(now: UInt64, intervalMs: UInt64) -> GHPresenceEvent? {
        guard !order.isEmpty else { return nil }
        if let last = lastFrameAt, now < last + intervalMs { return nil }
        var e = GHPresenceEvent()
        e.presences = order.compactMap { latest[$0] }
        latest.removeAll(keepingCapacity: true)
        order.removeAll(keepingCapacity: true)
        lastFrameAt = now
        return e
    }
}

extension CoalescedFrames {
    /// Homes' presence for session `s`.
    func owe(presence list: [GHPresence], to s: Session) {
        guard !list.isEmpty else { return }
        s.presenceOwed.offer(list)
        presenceWaiting.insert(s.key)
        s.markDirty()
    }

    /// At flush: the session's presence frame if one is due and it can take it now.
    func emitPresence(_ s: Session, _ pacing: FramePacing) {
        guard !s.presenceOwed.isEmpty else { return }
        guard s.isLoggedIn, s.detached == nil, s.queuedBytes <= pacing.shedBytes else { return }
        if let frame = s.presenceOwed.take(now: pacing.now, intervalMs: pacing.presenceIntervalMs) {
            s.push(event: GHEvent.OneOf_Body.presence(frame).sharedPayload)
        }
        if s.presenceOwed.isEmpty { presenceWaiting.remove(s.key) }
    }
}

extension GatewayRequests {
    // MARK: Idle sessions (the gateway tells the user's home as if the session had sent SetIdle)

    /// A request that is not upkeep: the session is active (again).
    func active(_ s: Session) {
        s.lastActiveAt = loop.nowMillis
        guard s.isIdleByTimer else { return }
        s.isIdleByTimer = false
        tellIdle(false, for: s)
    }

    /// At each sweep: is the session idle by the timer (`afterMs` without a request; 0: never) now?
    func checkIdle(_ s: Session, now: UInt64, afterMs: UInt64) {
        guard afterMs > 0, s.isLoggedIn, !s.isIdleByTimer, now >= s.lastActiveAt + afterMs else { return }
        s.isIdleByTimer = true
        tellIdle(true, for: s)
    }

    private func tellIdle(_ idle: Bool, for s: Session) {
        var r = GHSetIdle()
        r.idle = idle
        ask(.setIdle(r), for: s)
    }
}
