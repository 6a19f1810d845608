// After a resume that fell back to a fresh login (the server could no longer
// replay the dropped session's events), the answer names per channel the
// messages the old session was sent after the client's last event
// (`LoginResult.missed`); offline sync brings only what is addressed to the
// user. The SDK fetches each range from history and hands the messages to
// the listeners, in order, before that channel's live messages, which wait
// meanwhile (docs/reliability.md, docs/features.md). Messages already delivered (by seq) are
// not delivered again.

import GuildhallWire

extension GuildhallClient {
    /// Starts filling `gaps`: their channels' live messages wait from now on (connection thread).
    func beginFilling(_ gaps: [GHChannelGap]) {
        guard !gaps.isEmpty else { return }
        state.withLock { s in for g in gaps where s.filling[g.channelID] == nil { s.filling[g.channelID] = [] } }
        Task { await fill(gaps) }
    }

    /// Whether a live message of a channel being filled waits (it is kept for after the fill).
    func holdsForFill(_ m: GHChannelMessage, _ event: GHEvent) -> Bool {
        state.withLock { s in
            guard s.filling[m.channelID] != nil else { return false }
            s.filling[m.channelID]!.append(event)
            return true
        }
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
            var after = max(g.firstSeq - 1, state.withLock { $0.lastSeen[g.channelID] } ?? 0)
            while after < g.lastSeq {
                guard let page = try? await messages.history(of: g.channelID, after: after, limit: 100) else { break }
                for m in page.messages where m.seq <= g.lastSeq && noteDelivered(m) {
                    notify {
                        $0.onMessage(m, unread: nil)
                        $0.onMessage(m, left: 0, offline: false, hasPackage: false)
                    }
                }
                guard let last = page.messages.last?.seq, page.moreAvailable, last > after else { break }
                after = last
            }
            // Then what waited, in order, until none is left; live messages flow again after.
            while let waiting = state.withLock({ s -> [GHEvent]? in
                let w = s.filling[g.channelID] ?? []
                if w.isEmpty { s.filling[g.channelID] = nil; return nil }
                s.filling[g.channelID] = []
                return w
            }) {
                for e in waiting where noteDelivered(e.message) {
                    let unread: GHUnreadInfo? = e.hasUnread ? e.unread : nil
                    notify {
                        $0.onMessage(e.message, unread: unread)
                        $0.onMessage(e.message, left: Int(e.left), offline: e.offline, hasPackage: e.morePackages)
                    }
                }
            }
        }
    }
}
