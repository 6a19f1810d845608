// A home's side of shards moving between nodes (docs/cluster.md): it loads
// what the store holds for guilds and users it takes on (at start, and when
// this node takes shards over, after the node caught its store up from
// their logs), and forgets the guilds of shards another node now holds.
// Loading adds to what the home holds; ids and inbox ords go on above the
// highest the store has seen. Loop thread only.

import GuildhallCore
import GuildhallStore

extension Home {
    func place(user: UserID) -> Int { services.place(user: user) }
    func place(guild id: ServerID) -> Int { services.place(guild: id) }

    static let notServedHere = Failure(.unavailable, "this node does not serve that now (it is moving); retry")

    /// Takes on the guilds, positions, receipts and conversations of `snapshot` (this home's share of it).
    func adopt(_ snapshot: StoreSnapshot) {
        // Taken over again (a broken or refused append): nothing of the shards' earlier state stays.
        if gateway != nil, !snapshot.generations.isEmpty { drop(shards: Set(snapshot.generations.keys)) }
        shardGenerations.merge(snapshot.generations) { _, new in new }
        directory.sizeMarks = settings.serverSizeMarks
        directory.load(servers: snapshot.servers, members: snapshot.members, invites: snapshot.invites, channels: snapshot.channels,
                       bans: snapshot.bans, roles: snapshot.roles, overrides: snapshot.overrides, codes: snapshot.inviteCodes,
                       timeouts: snapshot.timeouts)
        for (user, channel, p) in snapshot.readPositions { positions.load(user, channel, p) }
        for (user, channel, seq) in snapshot.receivedSeqs { positions.loadReceived(user, channel, seq) }
        for (user, channel, seq, time) in snapshot.recentMentions { positions.addMention(user, channel, seq: seq, time: time) }
        ids.resume(after: snapshot.highestID)
        runner.adoptInbox(upTo: snapshot.highestInboxOrd)
        for (channel, r) in snapshot.receiptRequests where directory.channel(channel) != nil { groupReceipts.receipts.addRequest(r, in: channel) }
        for (channel, a) in snapshot.receiptAdvances where directory.channel(channel) != nil { groupReceipts.receipts.load(a, in: channel) }
        for c in snapshot.conversations { userHome.directs.add(c) }
        for (blocker, blocked) in snapshot.blocks { userHome.directs.setBlock(blocker, blocked, true) }
        directPrivacy.load(snapshot.serverMatesOnly)
        presences.load(snapshot.presences)
        profiles.load(snapshot.profiles)
        pushNotices.load(snapshot.pushRegistrations)
        memberLists.prepare(snapshot.servers.map(\.id))
        pinboard.load(snapshot.pins)
        webhooks.load(snapshot.webhooks)
        for m in snapshot.recentClientSends { recentSends.remember(sender: m.sender, clientID: m.clientID, uid: m.uid) }
        // At start the node gave every gateway the placements; later, the gateways hear of the channels taken on.
        guard gateway != nil else { return }
        presences.tookOver(shards: Set(snapshot.generations.keys))
        for c in snapshot.channels { links.place(c.id, in: c.serverID, local: gateway.routes) }
        // Sessions already here whose users are members of guilds taken on get
        // their fan-out from now on; those in auto mode subscribe to them as on joining.
        var adopted: [UserID: [ServerID]] = [:]
        for m in snapshot.members { adopted[m.userID, default: []].append(m.serverID) }
        for (user, servers) in adopted {
            let hadSessions = !registry.sessions(of: user).isEmpty
            for id in directory.serverIDs(of: user) { registry.joined(user, server: id) }
            reception.serve(user)
            if hadSessions { for id in servers { subscriptions.memberJoined(user, server: id) } }
        }
    }

    /// Forgets the guilds of `shards`: another node holds them now.
    func drop(shards: Set<Int>) {
        for shard in shards { shardGenerations.removeValue(forKey: shard) }
        // What is deleted there (an unregistered device, a lifted block) must not live on here
        // to come back if the shard does; what is only overwritten (profiles, presence) is loaded anew.
        let count = settings.shards
        pushNotices.forget { shards.contains(ShardPlan.shard(user: $0, shards: count)) }
        directPrivacy.forget { shards.contains(ShardPlan.shard(user: $0, shards: count)) }
        webhooks.forget { shards.contains(ShardPlan.shard(guild: $0.serverID, shards: count)) }
        userHome.directs.forgetBlocks { shards.contains(ShardPlan.shard(conversationOf: $0, $1, shards: count)) }
        let servers = Set(directory.allServerIDs.filter { shards.contains(ShardPlan.shard(guild: $0, shards: settings.shards)) })
        let channels = Set(servers.flatMap { directory.channelIDs(of: $0) })
        interest.handOver(servers: servers, channels: channels) {
            for id in servers {
                for c in directory.channelIDs(of: id) {
                    book.dropChannel(c)
                    typing.board.dropChannel(c)
                    positions.forgetChannel(c)
                    groupReceipts.receipts.remove(channel: c)
                    pinboard.forget(channel: c)
                }
                registry.serverDeleted(id)
                _ = directory.forget(id)
            }
        }
    }
}

extension HomeServices {
    /// Whether this node serves what a request names now (always, without a cluster).
    func servesHere(_ target: RequestTarget, for user: UserID) -> Bool {
        guard !settings.cluster.isEmpty, gateway != nil else { return true }
        let served = gateway.limits.node.served
        switch target {
        case .here, .everyHome: return true
        case .user, .gateway: return served.serves(user: user)
        case .guild(let id), .channel(let id), .announcedChannel(let id): return served.serves(id: id)
        case .channels(let ids): return ids.allSatisfy(served.serves(id:))
        case .guilds(let ids): return ids.allSatisfy(served.serves(id:))
        case .conversation(let peer): return served.serves(user: min(user, peer))
        }
    }
}
