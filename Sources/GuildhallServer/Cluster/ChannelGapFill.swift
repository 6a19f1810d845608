// Filling a gateway's gaps in a channel's messages (docs/cluster.md), both
// halves. The gateway checks each channel message's seq against the last it
// delivered (ChannelGaps, which explains when gaps happen); on a gap it
// holds the message and asks the home that sent it for the ones in between.
// The home reads them from its store (caught up from the shard's log when it
// took the guild over), sends them as the live fan-out would have, and says
// when it is done; the gateway then delivers what it held. Only in a
// cluster: between the loops of one node nothing is lost. The gateway's half
// is `GatewayInterest`'s (it keeps the gaps beside the holders it delivers
// to). Loop thread only.

import GuildhallCore
import GuildhallLoop
import GuildhallStore
import GuildhallWire

extension GatewayInterest {
    /// How long a gap's fetch may take before the gateway delivers what it held without it.
    static let gapFetchMs: UInt64 = 5_000

    /// A channel message from the home at `home` for `gateway`'s sessions, checked for a gap first.
    func arrived(_ e: ChannelEvent, from home: Int, on gateway: Gateway) {
        guard gateway.routes.cluster.clustered else { return deliverInRun(e, on: gateway) }
        if e.replayed {
            if gaps.replayed(e.channel.id, seq: e.seq) { deliverInRun(e, on: gateway) }
            return
        }
        switch gaps.arrived(e.channel.id, server: e.channel.serverID, seq: e.seq, toMembers: e.toMembers, e, now: gateway.loop.nowMillis) {
        case .deliver: deliverInRun(e, on: gateway)
        case .duplicate, .held: break
        case .fetch(let after, let before):
            gateway.limits.node.metrics.gapsFetched.increment()
            gateway.log.info("a gap in a channel's messages; fetching it", ["channel": e.channel.id, "after": after, "before": before])
            gateway.routes.replay(e.channel.id, after: after, before: before, from: home)
        }
    }

    /// The home sent again what `gateway` asked for: what waited goes out now.
    func gapFilled(_ channel: ChannelID, upTo: UInt64, on gateway: Gateway) {
        for e in gaps.filled(channel, upTo: upTo) { deliverInRun(e, on: gateway) }
    }

    /// Fetches unanswered past their deadline (the home died meanwhile): what waited goes out as it is.
    func giveUpGapFills(now: UInt64, on gateway: Gateway) {
        guard now > Self.gapFetchMs, gaps.fetching > 0 else { return }
        for (channel, held) in gaps.overdue(askedBefore: now - Self.gapFetchMs) {
            gateway.log.warn("a gap in a channel's messages was not filled in time", ["channel": channel])
            for e in held { deliverInRun(e, on: gateway) }
        }
    }
}

extension Home {
    /// Sends the gateway at `place` every message of `channel` after seq
    /// `after` and before `before`, a page at a time from the store, then says
    /// it is done: up to `before` - 1, or with `before` .max (everything it
    /// has), up to the last it sent.
    func replay(_ channel: ChannelID, after: UInt64, before: UInt64, to place: Int) {
        let limit = Int(min(UInt64(Limits.maxPageSize), before &- after &- 1))
        let everything = before == .max
        guard limit > 0 else { return links.replayed(channel, upTo: everything ? after : before &- 1, to: place, local: gateway) }
        runner.read(.history(channel: channel, anchor: after, after: true, limit: limit)) { result in
            var last = after
            if let record = self.directory.channel(channel), result.error == nil {
                for m in result.messages where m.seq < before {
                    // Not counted toward publisher pauses (holders 0): the gateway does not count it either.
                    let e = self.replayEvent(m, in: record)
                    if e.toMembers { self.interest.tellMemberStates(of: record.serverID) }
                    self.links.deliver(e, to: place, holders: 0, local: self.gateway)
                    last = m.seq
                }
            }
            if result.error == nil, result.hasMore, last > after, last + 1 < before {
                return self.replay(channel, after: last, before: before, to: place)
            }
            self.links.replayed(channel, upTo: everything ? last : before &- 1, to: place, local: self.gateway)
        }
    }

    /// `m` as its live fan-out sent it (to the audience the channel has now).
    private func replayEvent(_ m: MessageRecord, in channel: ChannelRecord) -> ChannelEvent {
        let header = MessageWire.UnreadHeader.ofMessage(seq: m.seq, sentTime: m.sentTime, maxCount: UInt64(settings.unreadDisplayCap),
                                                        lastMessageTime: channel.lastMessageTime, lastSeq: channel.lastSeq)
        let bytes = (try? GHChannelMessage(m).serializedBytes() as [UInt8]) ?? []
        let toMembers = directory.isSmall(channel.serverID)
        return ChannelEvent(payload: SharedBytes(MessageWire.event(message: bytes, unread: header, field: WireField.Event.message)),
                            channel: channel.tip, except: 0, toMembers: toMembers, hiddenFrom: toMembers ? onlineMembersHidden(from: channel) : [],
                            seq: m.seq, replayed: true,
                            files: m.attachments)
    }
}
