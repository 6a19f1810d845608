// Typing (README "What clients receive"): throttled per user and channel, sent only to
// CHANNEL_TYPING subscribers (never exempt), never to the typer's own
// sessions. Each subscribed session's gateway gets the channel's current
// typer list and composes at most one frame per interval from all its
// channels (TypingFrames.swift). Loop thread only.

import GuildhallCore
import GuildhallWire

/// Who is typing where.
final class ChannelTyping: HomePart {
    unowned let services: HomeServices
    var board: TypingBoard
    /// A timed-out member may not type.
    private unowned let moderation: Moderation
    /// Direct conversations, whose members hear each other type.
    private unowned let userHome: UserHome
    /// Where a direct peer's state is made ready to serve (Reception.serve).
    private unowned let reception: Reception

    init(services: HomeServices, moderation: Moderation, userHome: UserHome, reception: Reception) {
        self.services = services
        self.moderation = moderation
        self.userHome = userHome
        self.reception = reception
        let settings = services.settings
        board = TypingBoard(throttleMs: UInt64(settings.typingThrottleMs), expiryMs: UInt64(settings.typingExpiryMs))
    }
}

extension ChannelTyping {
    func sendTyping(_ r: GHSendTyping, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            let c = try directory.seen(by: s.user).channel(r.channelID)
            try moderation.requireNotTimedOut(s.user, in: c.serverID)
            if board.typed(s.user, in: c.id, now: now()) { typersChanged(c, by: s.user) }
            s.respond(id, .ok(GHOk()))
        }
    }

    /// Typing in a direct conversation, named by its peer or its id: the
    /// other members' sessions hear it (no subscription; the conversation's
    /// id stands for the channel, server 0).
    func sendDirectTyping(_ r: GHSendTyping, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            let directs = userHome.directs
            let found = r.conversationID != 0 ? directs[r.conversationID].flatMap { $0.includes(s.user) ? $0 : nil }
                : r.peerID != s.user ? directs.between(s.user, r.peerID) : nil
            guard let c = found else {
                throw Failure.notFound(r.conversationID != 0 ? "conversation \(r.conversationID) not found" : "no conversation with \(r.peerID)")
            }
            // A blocked user's typing is answered as any, and reaches no one.
            let withheld = !c.isGroup && directs.isWithheld(from: c, sender: s.user)
            if !withheld, board.typed(s.user, in: c.id, now: now()) { directTypersChanged(c, by: s.user) }
            s.respond(id, .ok(GHOk()))
        }
    }

    /// The conversation's other members hear the typer list (the typer's own sessions need none).
    func directTypersChanged(_ c: DirectConversation, by typer: UserID) {
        let now = now()
        for member in c.others(of: typer) {
            reception.serve(member)
            let entry = typers(in: c.id, server: 0, now: now, for: member)
            for s in registry.sessions(of: member).values where s.detachedSince == nil { s.port.typing(entry) }
        }
    }

    /// Sends the channel's typing subscribers its typer list, each without
    /// its own user; `typer`'s own sessions get none: their list leaves the user out, so it did not change.
    func typersChanged(_ c: ChannelRecord, by typer: UserID) {
        let now = now()
        var lists: [UserID: GHChannelTypers] = [:]
        for key in book.holders(.channelTyping, SubscriptionTarget(server: c.serverID, channel: c.id)) {
            guard let s = registry.all[key], s.user != typer, s.detachedSince == nil else { continue }
            if lists[s.user] == nil { lists[s.user] = typers(in: c.id, server: c.serverID, now: now, for: s.user) }
            s.port.typing(lists[s.user]!)
        }
    }

    /// Who types in a channel or conversation (server 0), as `user` sees it: without themselves.
    private func typers(in channel: UInt64, server: ServerID, now: UInt64, for user: UserID) -> GHChannelTypers {
        var entry = GHChannelTypers()
        entry.serverID = server
        entry.channelID = channel
        entry.typers = board.typers(in: channel, now: now, excluding: user).map { t in
            var typer = GHTyper()
            typer.userID = t.user
            typer.time = t.time
            return typer
        }
        return entry
    }
}
