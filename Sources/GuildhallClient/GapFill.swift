// After a resume that fell back to a fresh login (the server could no longer
// replay the dropped session's events), the answer names per channel the
// messages the old session was sent after the client's last event
// (`LoginResult.missed`); offline sync brings only what is addressed to the
// user. The SDK fetches each range from history and hands the messages to
// the listeners, in order, before that channel's live messages, which wait
// meanwhile (docs/reliability.md, docs/features.md). Messages already delivered (by seq) are
// not delivered again. The ranges are the channels' tails when the login was
// answered, and the channel's live messages start only once the client has
// subscribed again: what was sent in between is in neither. So the first live
// message after a fill must follow the last message handed over; when it does
// not, the hole is fetched from history first, and that message waits.

import GuildhallWire

extension GuildhallClient {
    /// After a resume fell back to a login: starts filling `gaps` (their
    /// channels' live messages wait from now on) and has every channel's
    /// first live message checked (connection thread).
    func beginFilling(_ gaps: [GHChannelGap]) {
        state.withLock { s in
            // Every channel the client had messages of, missed or not: its first live message must follow them.
            s.checkingNext.formUnion(s.lastSeen.keys)
            for g in gaps where s.filling[g.channelID] == nil { s.filling[g.channelID] = [] }
        }
        guard !gaps.isEmpty else { return }
        Task { await fill(gaps) }
    }

    /// Whether a live message of a channel being filled waits (it is kept for
    /// after the fill); the first one after a fill that does not follow what
    /// was handed over waits for its hole to be fetched.
    func holdsForFill(_ m: GHChannelMessage, _ event: GHEvent) -> Bool {
        let (held, hole) = state.withLock { s -> (Bool, GHChannelGap?) in
            if s.filling[m.channelID] != nil {
                s.filling[m.channelID]!.append(event)
                return (true, nil)
            }
            guard s.checkingNext.remove(m.channelID) != nil, let seen = s.lastSeen[m.channelID], m.seq > seen + 1 else { return (false, nil) }
            s.filling[m.channelID] = [event]
            var hole = GHChannelGap()
            hole.serverID = m.serverID
            hole.channelID = m.channelID
            hole.firstSeq = seen + 1
            hole.lastSeq = m.seq - 1
            return (true, hole)
        }
        if let hole { Task { await fill([hole]) } }
        return held
    }

    /// Notes a channel message handed to the listeners; false if one at or past its seq was already.
    func noteDelivered(_ m: GHChannelMessage) -> Bool {
        guard m.serverID != 0 else { return true }
        return state.withLock { s in
            if let seen = s.lastSeen[m.channelID], m.seq <= seen { return false }
            s.lastSeen[m.channelID] = m.seq
            return true
        }
    }

    private func fill(_ gaps: [GHChannelGap]) async {
        for g in gaps {
            await fetch(g.channelID, from: g.firstSeq, through: g.lastSeq)
            // Then what waited, in order, until none is left; live messages flow
            // again after, the first of them checked to follow what went before.
            while let waiting = state.withLock({ s -> [GHEvent]? in
                let w = s.filling[g.channelID] ?? []
                if w.isEmpty {
                    s.filling[g.channelID] = nil
                    s.checkingNext.insert(g.channelID)
                    return nil
                }
                s.filling[g.channelID] = []
                return w
            }) {
                for e in waiting {
                    // A hole before it (sent before the channel's live messages reached this session) is fetched first.
                    if let seen = state.withLock({ $0.lastSeen[g.channelID] }), e.message.seq > seen + 1 {
                        await fetch(g.channelID, from: seen + 1, through: e.message.seq - 1)
                    }
                    guard noteDelivered(e.message) else { continue }
                    let unread = e.messageUnread
                    notify {
                        $0.onMessage(e.message, unread: unread)
                        $0.onMessage(e.message, left: Int(e.left), offline: e.offline, hasPackage: e.morePackages)
                    }
                }
            }
        }
    }

    /// Hands the listeners `channel`'s messages from `first` through `last` from history, in order (those not handed over yet).
    private func fetch(_ channel: UInt64, from first: UInt64, through last: UInt64) async {
        var after = max(first > 0 ? first - 1 : 0, state.withLock { $0.lastSeen[channel] } ?? 0)
        while after < last {
            guard let page = try? await messages.history(of: channel, after: after, limit: 100) else { break }
            for m in page.messages where m.seq <= last && noteDelivered(m) {
                notify {
                    $0.onMessage(m, unread: nil)
                    $0.onMessage(m, left: 0, offline: false, hasPackage: false)
                }
            }
            guard let pageEnd = page.messages.last?.seq, page.moreAvailable, pageEnd > after else { break }
            after = pageEnd
        }
    }
}
