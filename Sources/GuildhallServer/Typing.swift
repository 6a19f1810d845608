// Typing (MISSION §4.5): throttled per user and channel, sent only to
// CHANNEL_TYPING subscribers (never exempt), never to the typer's own
// sessions, and coalesced to at most one frame per channel per subscriber
// per interval, carrying the current typer list. Loop thread only.

import GuildhallCore
import GuildhallWire

extension GuildhallService {
    func sendTyping(_ r: GHSendTyping, id: UInt64, from s: Session) {
        attempt(id, s) { () throws(Failure) in
            let c = try sendableChannel(r.channelID, for: s)
            if typing.typed(s.user, in: c.id, now: now()) { typersChanged(c) }
            s.respond(id, .ok(GHOk()))
        }
    }

    /// Marks the channel's typing subscribers (other users) as owed a frame.
    func typersChanged(_ c: ChannelRecord) {
        for key in book.holders(.channelTyping, SubscriptionTarget(server: c.serverID, channel: c.id)) {
            guard let s = session(key) else { continue }
            s.pendingTyping.insert(c.id)
            typingOwed.insert(key)
            s.markDirty()
        }
    }

    /// At flush: a typing frame per owed channel whose interval has passed;
    /// the rest wait for the typing timer.
    func emitTyping(_ s: Session) {
        guard !s.pendingTyping.isEmpty else { return }
        let loopNow = loop.nowMillis
        let now = now()
        for channel in s.pendingTyping.sorted() {
            if let last = s.lastTypingFrame[channel], loopNow < last + UInt64(settings.typingFrameIntervalMs) { continue }
            s.pendingTyping.remove(channel)
            guard let c = directory.channel(channel) else { continue }
            var e = GHTypingEvent()
            e.serverID = c.serverID
            e.channelID = c.id
            e.typers = typing.typers(in: c.id, now: now, excluding: s.user).map { t in
                var typer = GHTyper()
                typer.userID = t.user
                typer.time = t.time
                return typer
            }
            s.lastTypingFrame[channel] = loopNow
            s.push(event: GHEvent.OneOf_Body.typing(e).sharedPayload)
        }
        if s.pendingTyping.isEmpty { typingOwed.remove(s.key) }
    }

    /// The typing timer: sessions still owed a frame try again.
    func retryTyping() {
        for key in typingOwed {
            if let s = session(key) { s.markDirty() } else { typingOwed.remove(key) }
        }
    }

    /// The channel, if the session may send to it: a member (guests are read-only).
    func sendableChannel(_ id: ChannelID, for s: Session) throws(Failure) -> ChannelRecord {
        if let c = directory.channel(id), s.guestOf.contains(c.serverID) {
            throw Failure.forbidden("guests are read-only in server \(c.serverID)")
        }
        return try directory.readableChannel(id, by: s.user)
    }
}
