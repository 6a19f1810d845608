// Typing (README "What clients receive"): throttled per user and channel, sent only to
// CHANNEL_TYPING subscribers (never exempt), never to the typer's own
// sessions, and coalesced to at most one frame per channel per subscriber
// per interval, carrying the current typer list. Loop thread only.

import GuildhallCore
import GuildhallWire

/// Who is typing where, and the typing frames sessions are owed.
final class ChannelTyping: HomePart {
    unowned let home: Home
    var board: TypingBoard
    /// Sessions owed a typing frame that had to wait for its interval.
    var owed: Set<SessionKey> = []

    init(home: Home, settings: Settings) {
        self.home = home
        board = TypingBoard(throttleMs: UInt64(settings.typingThrottleMs), expiryMs: UInt64(settings.typingExpiryMs))
    }

    /// The session ended or lost its connection: it is owed nothing more.
    func forget(_ s: HomeSession) {
        owed.remove(s.key)
        s.pendingTyping.removeAll()
    }
}

extension ChannelTyping {
    func sendTyping(_ r: GHSendTyping, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            let c = try directory.readableChannel(r.channelID, by: s.user)
            if board.typed(s.user, in: c.id, now: now()) { typersChanged(c, by: s.user) }
            s.respond(id, .ok(GHOk()))
        }
    }

    /// Marks the channel's typing subscribers as owed a frame; `typer`'s own
    /// sessions are not: their list leaves the user out, so it did not change.
    func typersChanged(_ c: ChannelRecord, by typer: UserID) {
        for key in home.book.holders(.channelTyping, SubscriptionTarget(server: c.serverID, channel: c.id)) {
            guard let s = registry.all[key], s.user != typer else { continue }
            s.pendingTyping.insert(c.id)
            owed.insert(key)
            s.markOwing()
        }
    }

    /// At flush: a typing frame per owed channel whose interval has passed;
    /// the rest wait for the typing timer.
    func emitTyping(_ s: HomeSession) {
        guard !s.pendingTyping.isEmpty else { return }
        let loopNow = home.loop.nowMillis
        let now = now()
        for channel in s.pendingTyping.sorted() {
            if let last = s.lastTypingFrame[channel], loopNow < last + UInt64(settings.typingFrameIntervalMs) { continue }
            s.pendingTyping.remove(channel)
            guard let c = directory.channel(channel) else { continue }
            var e = GHTypingEvent()
            e.serverID = c.serverID
            e.channelID = c.id
            e.typers = board.typers(in: c.id, now: now, excluding: s.user).map { t in
                var typer = GHTyper()
                typer.userID = t.user
                typer.time = t.time
                return typer
            }
            s.lastTypingFrame[channel] = loopNow
            s.push(event: GHEvent.OneOf_Body.typing(e).sharedPayload)
        }
        if s.pendingTyping.isEmpty { owed.remove(s.key) }
    }

    /// The typing timer: sessions still owed a frame try again.
    func retryTyping() {
        for key in owed {
            if let s = registry.all[key] { s.markOwing() } else { owed.remove(key) }
        }
    }
}
