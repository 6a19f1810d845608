// Interest split in two (docs/architecture.md, docs/cluster.md), the home's half: per
// channel, how many sessions on each loop hold its message subscription,
// and the feed that keeps each gateway's half (`GatewayInterest`) in step:
// the subscriptions taken and dropped (before every fan-out and at the end
// of every turn), and the read positions and mentions of users whose
// sessions there hold the channel, as they move. A message then costs the
// home one `ChannelEvent` per interested gateway. Loop thread only.

import GuildhallCore

final class InterestFeed: HomePart {
    unowned let services: HomeServices
    /// Per channel, sessions holding its message subscription on each loop.
    private var counts: [ChannelID: [Int: Int]] = [:]
    /// Per server, sessions of online members on each loop (a small server's audience).
    private var memberCounts: [ServerID: [Int: Int]] = [:]
    /// Large servers whose members' moved positions the gateways were not
    /// told: only a small server's delivery reads them there, so a send in a
    /// large one costs no update. Before such a server's next delivery to
    /// its members (it turned small) they are told all of them again.
    private var memberStatesUntold: Set<ServerID> = []
    /// Per (user, channel), the user's sessions holding the channel's message
    /// subscription; per (user, server), the user's sessions that are online
    /// members of it. Both as the gateways were told: a moved position
    /// (every send moves its sender's) asks these first, in one look-up
    /// each, whether any gateway keeps it.
    private var holdingSessions: [ReadPositions.Key: Int] = [:]
    private var memberSessions: [ReadPositions.Key: Int] = [:]

    init(services: HomeServices) { self.services = services }

    /// Tells the gateways the subscriptions taken and dropped, and the online
    /// members who came and went, since the last call.
    func sync() {
        for c in registry.takeMemberChanges() {
            let loop = services.links.place(ofSession: c.session)
            var perLoop = memberCounts[c.server] ?? [:]
            perLoop[loop, default: 0] += c.member ? 1 : -1
            if perLoop[loop]! <= 0 { perLoop.removeValue(forKey: loop) }
            memberCounts[c.server] = perLoop.isEmpty ? nil : perLoop
            Self.count(&memberSessions, ReadPositions.Key(c.user, c.server), c.member)
            services.links.interest(.member(key: c.session, user: c.user, server: c.server, states: c.member ? states(of: c.user, in: c.server) : nil),
                                to: loop, local: services.gateway)
        }
        for c in book.takeMessageChanges() {
            let loop = services.links.place(ofSession: c.session)
            var perLoop = counts[c.target.channel] ?? [:]
            perLoop[loop, default: 0] += c.holds ? 1 : -1
            if perLoop[loop]! <= 0 { perLoop.removeValue(forKey: loop) }
            counts[c.target.channel] = perLoop.isEmpty ? nil : perLoop
            Self.count(&holdingSessions, ReadPositions.Key(c.user, c.target.channel), c.holds)
            let state = c.holds ? positions.state(c.user, c.target.channel) : nil
            services.links.interest(.holds(key: c.session, user: c.user, channel: c.target.channel, state: state), to: loop, local: services.gateway)
        }
    }

    private static func count(_ sessions: inout [ReadPositions.Key: Int], _ key: ReadPositions.Key, _ up: Bool) {
        let n = (sessions[key] ?? 0) + (up ? 1 : -1)
        sessions[key] = n > 0 ? n : nil
    }

    /// Forgets guilds another node serves now without telling the gateways:
    /// their halves stay as they are until the new home's updates replace
    /// them (the sessions keep their subscriptions across the move,
    /// SubscriptionCarry.swift, and the gateways their chains of seqs).
    /// `drop` forgets the guilds from the index.
    func handOver(servers: Set<ServerID>, channels: Set<ChannelID>, drop: () -> Void) {
        sync()
        drop()
        _ = registry.takeMemberChanges()
        _ = book.takeMessageChanges()
        for s in servers {
            memberCounts.removeValue(forKey: s)
            memberStatesUntold.remove(s)
        }
        for c in channels { counts.removeValue(forKey: c) }
        holdingSessions = holdingSessions.filter { !channels.contains($0.key.channel) }
        memberSessions = memberSessions.filter { !servers.contains($0.key.channel) }
    }

    /// Loops with sessions holding `channel`'s message subscription, and how many each.
    func loops(holding channel: ChannelID) -> [Int: Int]? { counts[channel] }

    /// `user`'s read position or mentions in `channel` moved: each gateway
    /// with a session of the user holding the channel gets the new state.
    /// Returns whether any gateway keeps the position (false: nothing was told).
    @discardableResult
    func positionMoved(_ user: UserID, _ channel: ChannelID, in server: ServerID) -> Bool {
        // Asked on every send for its sender, who mostly holds nothing to tell: that is found first.
        var toMembers = false
        if memberCounts[server] != nil {
            if directory.isSmall(server) {
                toMembers = memberSessions[ReadPositions.Key(user, server)] != nil
            } else {
                memberStatesUntold.insert(server)
            }
        }
        guard toMembers || holdingSessions[ReadPositions.Key(user, channel)] != nil else { return false }
        var told: [Int] = []
        for s in registry.sessions(of: user).values {
            guard (toMembers && registry.isOnlineMember(s.key, of: server)) || book.level(of: s.key, in: channel) == .messages else { continue }
            let loop = services.links.place(ofSession: s.key)
            guard !told.contains(loop) else { continue }
            told.append(loop)
            services.links.interest(.position(user: user, channel: channel, server: server, positions.state(user, channel)), to: loop,
                                local: services.gateway)
        }
        return true
    }

    /// Sends a channel message to every gateway whose sessions hold the
    /// channel's subscription (or, for a small server, are its online members).
    func deliver(_ e: ChannelEvent) {
        guard let perLoop = e.toMembers ? memberCounts[e.channel.serverID] : counts[e.channel.id] else { return }
        if e.toMembers { tellMemberStates(of: e.channel.serverID) }
        for (loop, n) in perLoop where n > 0 { services.links.deliver(e, to: loop, holders: n, local: services.gateway) }
    }

    /// Before a delivery to `server`'s online members: if their moved
    /// positions went untold while it was large, each of their sessions'
    /// gateways gets their states anew (a `.member` update replaces them).
    func tellMemberStates(of server: ServerID) {
        guard memberStatesUntold.remove(server) != nil else { return }
        for s in registry.onlineMembers(of: server).values {
            services.links.interest(.member(key: s.key, user: s.user, server: server, states: states(of: s.user, in: server)),
                                to: services.links.place(ofSession: s.key), local: services.gateway)
        }
    }

    /// `user`'s states in `server`'s channels, where not the starting state.
    private func states(of user: UserID, in server: ServerID) -> [ChannelID: PositionState] {
        var states: [ChannelID: PositionState] = [:]
        for channel in directory.channelIDs(of: server) {
            let state = positions.state(user, channel)
            if state.position.readSeq != 0 || !state.mentions.isEmpty { states[channel] = state }
        }
        return states
    }

    /// Whether any loop has sessions of `server`'s online members.
    func hasMembersOnline(_ server: ServerID) -> Bool { memberCounts[server] != nil }
}
