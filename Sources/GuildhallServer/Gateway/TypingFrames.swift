// Typing frames (docs/features.md): composed at the subscriber's gateway, so a
// session gets at most one typing frame per `typing-frame-interval-ms`
// however many channels, homes and nodes its typers are spread over. Homes
// send each changed typer list of a channel to each subscribed session
// (`SessionPort.typing`); the session keeps the latest list per channel, and
// its next frame carries them all. A session behind on its writes, or
// without a connection, gets none: typing is shed, never queued. Touches
// the sessions it is given and its own waiting set; loop thread only.

import GuildhallCore
import GuildhallWire

/// The typer lists a session is owed, and when its last frame went out. Pure.
struct TypingOwed {
    /// The latest list per channel, in the order channels first changed.
    private(set) var channels: [GHChannelTypers] = []
    private(set) var lastFrameAt: UInt64?

    var isEmpty: Bool { channels.isEmpty }

    mutating func offer(_ entry: GHChannelTypers) {
        if let i = channels.firstIndex(where: { $0.channelID == entry.channelID }) { channels[i] = entry } else { channels.append(entry) }
    }

    /// The frame due at `now`, if any; what it carries is no longer owed.
    mutating func take(now: UInt64, intervalMs: UInt64) -> GHTypingEvent? {
        guard let first = channels.first else { return nil }
        if let last = lastFrameAt, now < last + intervalMs { return nil }
        var e = GHTypingEvent()
        e.serverID = first.serverID
        e.channelID = first.channelID
        e.typers = first.typers
        e.channels = channels
        channels.removeAll()
        lastFrameAt = now
        return e
    }

    /// Drops what is owed (shed); returns how many lists were.
    mutating func shed() -> Int {
        defer { channels.removeAll() }
        return channels.count
    }
}

extension CoalescedFrames {
    /// A home's new typer list of a channel for session `s`.
    func owe(typing entry: GHChannelTypers, to s: Session) {
        s.typingOwed.offer(entry)
        typingWaiting.insert(s.key)
        s.markDirty()
    }

    /// At flush: the session's typing frame if one is due; shed if it cannot take it now.
    func emitTyping(_ s: Session, _ pacing: FramePacing) {
        guard !s.typingOwed.isEmpty else { return }
        if !s.isLoggedIn || s.detached != nil || s.queuedBytes > pacing.shedBytes {
            shed.increment(by: Int64(s.typingOwed.shed()))
        } else if let frame = s.typingOwed.take(now: pacing.now, intervalMs: pacing.typingIntervalMs) {
            s.push(event: GHEvent.OneOf_Body.typing(frame).sharedPayload)
        }
        if s.typingOwed.isEmpty { typingWaiting.remove(s.key) }
    }
}
