// A gateway's way to the homes (docs/architecture.md, docs/cluster.md): which home hears
// each request and each report about a session. A login goes to its user's
// home, which admits it; the other homes then hear the session opened, so
// each can deliver to it and answer it. A request goes where the request
// table says and its ids lead (`HomeMap`): a guild's to the guild's home (a
// channel's guild from the placements homes announce), a user's to the
// user's home, a direct conversation's to its lower user's home. A request
// whose home its ids do not tell (message UIDs, conversation ids, lists
// across guilds) goes to every home: each answers what it holds, and the
// parts merge into one answer (GatherMerge.swift). Reports of a session's
// life go to every home; acknowledgements to its user's home. Gateway loop only.

import GuildhallCore
import GuildhallWire

final class HomeRoutes {
    let map: HomeMap
    /// This gateway's loop.
    let index: Int
    /// Every home of this node by loop: this loop's called directly, the others through `RemoteHome`s.
    private var homes: [any GatewayHome] = []
    /// Homes on other nodes, by place (Place.swift), made when first needed.
    private var remote: [Int: RemoteHome] = [:]
    /// Each channel's guild, as the homes announced them (for a channel id's home).
    private var channels: [ChannelID: ServerID]
    /// Requests every home answers, until all parts are in (Gathers.swift).
    var gathers = Gathers()
    unowned var gateway: Gateway!

    /// In a cluster, the shards this node serves, where every home is, and the other nodes.
    let served: ServedShards
    let cluster: ClusterView
    let bus: NodeBus?

    init(map: HomeMap, index: Int, channels: [ChannelID: ServerID], served: ServedShards, cluster: ClusterView, bus: NodeBus?) {
        self.map = map
        self.index = index
        self.channels = channels
        self.served = served
        self.cluster = cluster
        self.bus = bus
    }

    func connect(_ homes: [any GatewayHome]) { self.homes = homes }

    /// The home at `place`: a loop of this node, or of another through the bus.
    func home(_ place: Int) -> any GatewayHome {
        guard Place.isRemote(place) else { return homes[place] }
        if let h = remote[place] { return h }
        let h = RemoteHome(index: index, home: place, bus: bus!)
        remote[place] = h
        return h
    }

    /// Every home's place: this node's loops, and every loop of every other live node.
    var everyPlace: [Int] { Array(homes.indices) + cluster.remotePlaces }

    /// Whether only this loop's home exists (one loop, no cluster): nothing to route.
    var alone: Bool { homes.count == 1 && !cluster.clustered }

    /// The place of a user's home (nil in a cluster while no node serves the
    /// user's shard: none owns it, or this node is still taking it over).
    func place(user: UserID) -> Int? {
        guard cluster.clustered else { return map.home(user: user) }
        guard let p = cluster.place(user: user), Place.isRemote(p) || served.serves(user: user) else { return nil }
        return p
    }

    private func place(guild id: ServerID) -> Int? {
        guard cluster.clustered else { return map.home(guild: id) }
        guard let p = cluster.place(guild: id), Place.isRemote(p) || served.serves(id: id) else { return nil }
        return p
    }

    // MARK: Sessions

    /// Whether some node serves the user's home now (always, without a cluster).
    func canAdmit(_ user: UserID) -> Bool { place(user: user) != nil }

    func admit(_ a: Admission) {
        guard let h = place(user: a.token.user) else { return }
        home(h).admit(a)
    }

    /// Its user's home admitted `s`: the others hear of it before its next request.
    func opened(_ s: Session) {
        guard !alone else { return }
        let userHome = place(user: s.user)
        let o = OpenedSession(key: s.key, user: s.user, device: s.device, sessionID: s.sessionID, autoSubscribe: s.autoSubscribeAtLogin,
                              gatewayLife: gateway.limits.node.cluster.life)
        for p in everyPlace where p != userHome { home(p).sessionOpened(o) }
    }

    func acknowledged(session key: UInt64, ackedOrd: UInt64, packageAcked: Bool) {
        guard let s = gateway.sessions[key], let h = place(user: s.user) else { return }
        home(h).acknowledged(session: key, ackedOrd: ackedOrd, packageAcked: packageAcked)
    }

    /// The session's device received channels' messages up to seqs: each channel's home hears of its own.
    func received(_ upTo: [(ChannelID, UInt64)], from s: Session) {
        var byHome: [Int: [ChannelID: UInt64]] = [:]
        for (channel, seq) in upTo {
            guard let h = alone ? 0 : place(ofChannel: channel, for: s) else { continue }
            byHome[h, default: [:]][channel] = max(seq, byHome[h]?[channel] ?? 0)
        }
        for (h, part) in byHome { home(h).received(session: s.key, part) }
    }

    /// Tells every home (a session ended, was detached or resumed, fell behind or caught up).
    func tellEveryHome(_ tell: (any GatewayHome) -> Void) { for p in everyPlace { tell(home(p)) } }
    func turnEnding() { for h in homes { h.turnEnding() } }
    func turnEnded(_ gateway: Gateway) {
        for h in homes { h.turnEnded(gateway) }
        for h in remote.values { h.turnEnded(gateway) }
    }

    // MARK: Requests

    /// Sends of one session to one channel, in the order read (a `SendRun`'s, or one); `bytes`: their frames' size.
    func sendMessages(_ sends: [PendingSend], from s: Session, bytes: Int) {
        guard let channel = sends.first?.request.channelID else { return }
        guard let h = alone ? 0 : place(ofChannel: channel, for: s) else {
            // In a cluster the shard may be between owners: the gateway tries again for a while (ForwardedSends.swift).
            for p in sends {
                if cluster.clustered { gateway.requests.forwarding(p.request, id: p.id, from: s, orphaned: true) } else { refuseUnserved(p.id, from: s) }
            }
            return
        }
        if Place.isRemote(h) {
            // Each forwarded send is kept until answered, under the UID minted for it here.
            let forwarded = sends.map { PendingSend(request: gateway.requests.forwarding($0.request, id: $0.id, from: s), id: $0.id) }
            return send(forwarded, to: h, from: s, bytes: bytes)
        }
        send(sends, to: h, from: s, bytes: bytes)
    }

    func send(_ sends: [PendingSend], to h: Int, from s: Session, bytes: Int = 0) {
        if h != index { s.forwarded(requests: sends.count, bytes: bytes) }
        home(h).sendMessages(sends, session: s.key)
    }

    /// Where a send to `channel` goes now (nil: no node serves it).
    func sendPlace(_ channel: ChannelID, for s: Session) -> Int? { alone ? 0 : place(ofChannel: channel, for: s) }

    /// `rule`: the request's row (built once, by the caller); `bytes`: the
    /// request's size, counted while a home on another loop has it.
    func route(_ body: GHRequest.OneOf_Body, rule: RequestRule, id: UInt64, from s: Session, bytes: Int) {
        if case .setReceivedStatus(let r) = body, (1...Limits.maxIdsPerRequest).contains(r.messageUids.count) {
            // Flags are kept only on messages the caller may read: the homes
            // that hold them say which first, as for GetMessages.
            s.forwarded(bytes: bytes)
            var get = GHGetMessages()
            get.uids = r.messageUids
            gather(.getMessages(get), id: id, from: s, merge: .readableFirst(r))
            return
        }
        if let r = grantFirst(body) {
            s.forwarded(bytes: bytes)
            return checkFirst(r, id: id, from: s)
        }
        // Alone, one home answers what every home would, but through the same
        // gather and merge, so an answer the merge shapes (a page cut from
        // every home's matches) comes out the same with one loop as with several.
        guard !alone || rule.target == .everyHome else {
            homes[0].route(body, id: id, session: s.key, part: false)
            return
        }
        switch destination(body, rule.target, for: s) {
        case .one(let h):
            if h != index { s.forwarded(bytes: bytes) }
            home(h).route(body, id: id, session: s.key, part: false)
        case .every:
            s.forwarded(bytes: bytes)
            gather(body, id: id, from: s, merge: rule.merge)
        case .unserved:
            refuseUnserved(id, from: s)
        }
    }

    /// Asks `places` (every home by default) for their parts of the answer.
    func gather(_ body: GHRequest.OneOf_Body, id: UInt64, from s: Session, merge: GatherMerge, places: [Int]? = nil) {
        let places = places ?? everyPlace
        let gid = newGather(merge, expecting: places.count, id: id, from: s)
        for p in places { home(p).route(body, id: gid, session: s.key, part: true) }
    }

    /// A gather waiting for `expecting` parts; returns its id.
    func newGather(_ merge: GatherMerge, expecting: Int, id: UInt64, from s: Session) -> UInt64 {
        gathers.start(Gather(session: s.key, id: id, merge: merge, expected: expecting, started: gateway.loop.nowMillis))
    }

    /// A home's part of a gathered answer; the last one completes it.
    func partArrived(_ gid: UInt64, _ part: GatherPart, for s: Session) {
        guard let g = gathers.arrived(gid, part), s.isOpen, s.key == g.session else { return }
        s.homeAnswered()
        switch g.merge {
        case .readableFirst(let r): setReceivedStatus(r, id: g.id, from: s, readable: g.merge.merged(g.parts))
        case .tailsFirst(let f): resumeFallback(f, on: s, tails: g.merge.merged(g.parts))
        case .checksFirst(let r): subscribeChecked(r, id: g.id, from: s, checks: g.merge.merged(g.parts))
        case .grantsFirst(let r, let refused): subscribeGranted(r, refused: refused, id: g.id, from: s, grants: g.merge.merged(g.parts))
        case .granted(let r, let refused):
            let result = g.merge.merged(g.parts)
            answerGathered(s, g.id, result)
            releaseFailed(r, refused: refused, answer: result, for: s)
        default: answerGathered(s, g.id, g.merge.merged(g.parts))
        }
    }

    /// The one answer of a gathered request; an error counts once however many homes answered it.
    func answerGathered(_ s: Session, _ id: UInt64, _ result: GHResponse.OneOf_Result) {
        if case .error(let e) = result, let code = FailureCode(rawValue: e.code.rawValue) { gateway.limits.node.metrics.answered(code) }
        s.respond(id, result)
    }

    /// Stores the flags at the user's home when every message is one the caller may read; otherwise answers
    /// the first other one as not found, exactly as for a UID that names nothing.
    private func setReceivedStatus(_ r: GHSetReceivedStatus, id: UInt64, from s: Session, readable: GHResponse.OneOf_Result) {
        guard case .messages(let page) = readable else { return answerGathered(s, id, readable) }
        let found = Set(page.messages.map(\.uid))
        if let missing = r.messageUids.first(where: { !found.contains($0) }) {
            return s.fail(id, Failure.notFound("message \(missing) not found"))
        }
        guard let h = place(user: s.user) else { return refuseUnserved(id, from: s) }
        if h != index { s.forwarded(bytes: 0) }
        home(h).route(.setReceivedStatus(r), id: id, session: s.key, part: false)
    }

    /// Asks the home at `place` for a channel's messages this gateway missed (ChannelGapFill.swift).
    func replay(_ channel: ChannelID, after: UInt64, before: UInt64, from place: Int) {
        home(place).replay(channel, after: after, before: before, toGateway: index)
    }

    /// Asks the home of `channel` for its messages after `seq` (a subscription
    /// carried to a new home: what it sent before the subscription arrived).
    func replayMissed(_ channel: ChannelID, after seq: UInt64, for s: Session) {
        guard let h = place(ofChannel: channel, for: s) else { return }
        home(h).replay(channel, after: seq, before: .max, toGateway: index)
    }


    enum Destination {
        case one(Int)
        /// Every home answers in part.
        case every
        /// In a cluster, no node owns what the request names now.
        case unserved
    }

    /// The place of the home that answers a request going to `target`, or every home, or none (in a cluster, while a shard has no owner).
    func destination(_ body: GHRequest.OneOf_Body, _ target: RequestTarget, for s: Session) -> Destination {
        func one(_ place: Int?) -> Destination { place.map { .one($0) } ?? .unserved }
        switch target {
        case .user, .gateway: return one(place(user: s.user))
        case .here:
            switch body {
            case .createServer, .createGroup: return .one(newGuildPlace)
            default: return .one(index)
            }
        case .guild(let id): return one(place(guild: id))
        case .channel(let id): return one(place(ofChannel: id, for: s))
        case .announcedChannel(let id):
            if cluster.clustered { return one(place(guild: id)) }
            return placeIfKnown(ofChannel: id).map { .one($0) } ?? .every
        case .channels(let ids):
            if cluster.clustered { return oneHome(ids.map { place(guild: $0) }).map { .one($0) } ?? .every }
            return oneHome(ids.map { channels[$0].map { map.home(guild: $0) } }).map { .one($0) } ?? .every
        case .guilds(let ids): return oneHome(ids.map { place(guild: $0) }).map { .one($0) } ?? .every
        case .conversation(let peer): return one(place(user: min(s.user, peer)).map { cluster.clustered ? $0 : map.home(conversationOf: s.user, peer) })
        case .everyHome: return .every
        }
    }

    /// Where a new guild is made: this loop, unless in a cluster it serves
    /// none of the node's shards (a guild's home follows its shard) and another loop here does.
    private var newGuildPlace: Int {
        guard cluster.clustered else { return index }
        let loops = homes.count
        let shards = served.all
        if shards.contains(where: { $0 % loops == index }) { return index }
        return shards.map { $0 % loops }.min() ?? index
    }

    /// Another node holds what the request names (or none does, for a moment while it moves).
    func refuseUnserved(_ id: UInt64, from s: Session) {
        s.respond(id, .error(GHError(Failure(.unavailable, "no node serves that now; retry"))))
    }

    /// The place of a channel's guild's home. In a cluster a channel's id
    /// shares its guild's shard (`Home.newID`); on a single node, a channel no
    /// home announced is answered (not found) by the caller's user home, as one that does not exist.
    private func place(ofChannel id: ChannelID, for s: Session) -> Int? {
        if cluster.clustered { return place(guild: id) }
        return placeIfKnown(ofChannel: id) ?? map.home(user: s.user)
    }

    /// The place of a channel's guild's home, nil when no home announced it (or, in a cluster, none serves it now).
    func placeIfKnown(ofChannel id: ChannelID) -> Int? {
        cluster.clustered ? place(guild: id) : channels[id].map { map.home(guild: $0) }
    }

    /// The one home all of `homes` name, or nil when they name several or do not know.
    private func oneHome(_ homes: [Int?]) -> Int? {
        guard let first = homes.first ?? nil else { return nil }
        return homes.allSatisfy { $0 == first } ? first : nil
    }

    // MARK: Placements

    /// A home announced a channel (or that it is gone).
    func place(_ channel: ChannelID, in server: ServerID?) { channels[channel] = server }
}

