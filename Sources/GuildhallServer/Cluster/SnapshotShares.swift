// Each home's share of the store's startup snapshot (docs/cluster.md): the
// guilds `HomeMap` places on it with everything in them (members, invites,
// bans, channels, read positions and mentions in those channels, receipt
// state), the direct conversations it holds, and its users' presence. Every share knows the
// highest id and inbox ord, so no loop reissues one, and every share gets
// the recent sends with client ids (a resend is checked where it is sent).
// Pure.

import GuildhallCore
import GuildhallStore

extension StoreSnapshot {
    func shares(_ map: HomeMap) -> [StoreSnapshot] {
        var shares = (0..<map.loops).map { _ in
            var share = StoreSnapshot()
            share.highestID = highestID
            share.highestInboxOrd = highestInboxOrd
            share.recentClientSends = recentClientSends
            share.generations = generations
            return share
        }
        guard map.loops > 1 else {
            shares[0] = self
            return shares
        }
        var channelHome: [ChannelID: Int] = [:]
        for c in channels {
            let h = map.home(guild: c.serverID)
            channelHome[c.id] = h
            shares[h].channels.append(c)
        }
        for s in servers { shares[map.home(guild: s.id)].servers.append(s) }
        for m in members { shares[map.home(guild: m.serverID)].members.append(m) }
        for i in invites { shares[map.home(guild: i.serverID)].invites.append(i) }
        for c in inviteCodes { shares[map.home(guild: c.serverID)].inviteCodes.append(c) }
        for t in timeouts { shares[map.home(guild: t.serverID)].timeouts.append(t) }
        for b in bans { shares[map.home(guild: b.serverID)].bans.append(b) }
        for r in roles { shares[map.home(guild: r.serverID)].roles.append(r) }
        for o in overrides { shares[map.home(guild: o.serverID)].overrides.append(o) }
        for p in readPositions { if let h = channelHome[p.1] { shares[h].readPositions.append(p) } }
        for r in receivedSeqs { if let h = channelHome[r.1] { shares[h].receivedSeqs.append(r) } }
        for p in pins { if let h = channelHome[p.channelID] { shares[h].pins.append(p) } }
        for w in webhooks { shares[map.home(guild: w.serverID)].webhooks.append(w) }
        for m in recentMentions { if let h = channelHome[m.1] { shares[h].recentMentions.append(m) } }
        for r in receiptRequests { if let h = channelHome[r.0] { shares[h].receiptRequests.append(r) } }
        for a in receiptAdvances { if let h = channelHome[a.0] { shares[h].receiptAdvances.append(a) } }
        for c in conversations { shares[map.home(of: c)].conversations.append(c) }
        for p in presences { shares[map.home(user: p.0)].presences.append(p) }
        for p in profiles { shares[map.home(user: p.user)].profiles.append(p) }
        for r in pushRegistrations { shares[map.home(user: r.user)].pushRegistrations.append(r) }
        for b in blocks { shares[map.home(conversationOf: b.0, b.1)].blocks.append(b) }
        for u in serverMatesOnly { shares[map.home(user: u)].serverMatesOnly.append(u) }
        return shares
    }
}
