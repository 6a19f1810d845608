// Subscriptions that follow a guild to its new home (docs/cluster.md). A
// session's subscriptions live at the home of each guild they name; when
// the guild's shard moves to another node, the new home starts with none.
// So in a cluster each gateway keeps its sessions' ledger (what each asked
// to subscribe to and which servers it entered as a guest), and when shards
// change hands it asks the new homes again, for its sessions, exactly as
// the SDK does after a fresh login. A request refused while the new owner is
// still catching up (503) is asked again each sweep, for up to 30 s. Once
// the new home holds a channel's subscription, it is asked for the
// channel's messages after the last one this gateway delivered, so what it
// sent before the subscription arrived is not missed (ChannelGapFill.swift).
// The gateway's side of the interest stays as it was meanwhile: the old home
// hands a guild over without ending it (InterestFeed.handOver).
// The answers to these requests are the gateway's, not the client's: their
// ids start at `firstCarriedID`, above any a client uses. Kept by
// `GatewayRequests`, with the sends forwarded to other nodes
// (ForwardedSends.swift); it touches the sessions it is given, the routes
// and the gateway's gap record. Gateway loop only.

import GuildhallCore
import GuildhallLoop
import GuildhallWire
import SwiftProtobuf

/// A request the gateway made again for one of its sessions, until answered.
struct CarriedRequest {
    let session: UInt64
    let body: GHRequest.OneOf_Body
    let since: UInt64
}

/// What a gateway asks of homes for its sessions and answers itself:
/// requests carried to guilds' new homes and sends forwarded to other nodes.
final class GatewayRequests {
    static let firstCarriedID: UInt64 = 1 << 63
    static let carryForMs: UInt64 = 30_000

    let routes: HomeRoutes
    /// The gateway's half of the interest: its record of the last message delivered per channel (what a new home is asked again for).
    let interest: GatewayInterest
    let loop: EventLoop
    let clock: @Sendable () -> UInt64
    let shards: Int
    /// Mints a message UID at a loop time (the loop's home's generator).
    var mintUID: (UInt64) -> MessageUID = { _ in 0 }
    /// Requests made again at guilds' new homes, by id, and those to make again next sweep.
    var carried: [UInt64: CarriedRequest] = [:]
    var carryAgain: [CarriedRequest] = []
    var nextCarriedID = GatewayRequests.firstCarriedID
    /// Sends forwarded to another node and not yet answered (ForwardedSends.swift).
    var forwardedSends: [ForwardedSend.Key: ForwardedSend] = [:]

    init(routes: HomeRoutes, interest: GatewayInterest, loop: EventLoop, clock: @escaping @Sendable () -> UInt64, shards: Int) {
        self.routes = routes
        self.interest = interest
        self.loop = loop
        self.clock = clock
        self.shards = shards
    }

    /// A session's request, noted in its ledger when it changes what the session holds (in a cluster only).
    func noteForCarry(_ body: GHRequest.OneOf_Body, of s: Session) {
        guard routes.cluster.clustered else { return }
        switch body {
        case .subscribe(let r): s.ledger.record(r)
        case .enterAsGuest(let r): s.ledger.guestServers.insert(r.serverID)
        case .leaveAsGuest(let r): s.ledger.forgetGuest(r.serverID)
        default: break
        }
    }

    /// The guilds of `shards` have new homes: every session here asks them
    /// again for what it held there.
    func carrySubscriptions(ofShards shards: Set<Int>, of sessions: some Sequence<Session>) {
        let count = self.shards
        for s in sessions where s.isLoggedIn && !s.ledger.isEmpty {
            for body in s.ledger.requests(for: { shards.contains(ShardPlan.shard(guild: $0, shards: count)) }) {
                carry(CarriedRequest(session: s.key, body: body, since: loop.nowMillis), for: s)
            }
        }
    }

    /// A request the gateway makes for its session (PresenceFrames.swift): its answer is the gateway's.
    func ask(_ body: GHRequest.OneOf_Body, for s: Session) {
        carry(CarriedRequest(session: s.key, body: body, since: loop.nowMillis), for: s)
    }

    private func carry(_ c: CarriedRequest, for s: Session) {
        nextCarriedID += 1
        carried[nextCarriedID] = c
        routes.route(c.body, rule: c.body.rule, id: nextCarriedID, from: s, bytes: 0)
    }

    /// The answer to a carried request: asked again later when the new home
    /// did not serve it yet; otherwise each channel it holds now is asked for what this gateway missed.
    func carriedAnswered(_ s: Session, _ id: UInt64, _ result: GHResponse.OneOf_Result) {
        guard let c = carried.removeValue(forKey: id) else { return }
        switch result {
        case .error(let e) where e.code == .unavailable:
            if loop.nowMillis < c.since + Self.carryForMs { carryAgain.append(c) }
        case .subscribe(let answer):
            guard case .subscribe(let r) = c.body, [.channelMsg, .guestChannel].contains(r.type) else { return }
            for t in answer.results where t.status == .targetOk {
                if let last = interest.gaps.last(in: t.target.channelID) { routes.replayMissed(t.target.channelID, after: last, for: s) }
            }
        default:
            break
        }
    }

    /// Whether request `id` is one the gateway made itself.
    func isCarried(_ id: UInt64) -> Bool { carried[id] != nil }

    /// Whether answers from homes may be for the gateway rather than the client.
    var answersNeedSorting: Bool { !carried.isEmpty || !forwardedSends.isEmpty }

    /// Each sweep: the carried requests answered 503 are asked again.
    func carryRefusedAgain(_ session: (UInt64) -> Session?) {
        guard !carryAgain.isEmpty else { return }
        let again = carryAgain
        carryAgain = []
        for c in again {
            guard let s = session(c.session), s.isLoggedIn else { continue }
            carry(c, for: s)
        }
    }

    /// Whether an encoded answer for `s` goes to its client: not when it
    /// answers a request the gateway made (a carried subscription, a send
    /// forwarded again), nor a forward superseded by one made again.
    func isTheClients(_ payload: [UInt8], for s: Session) -> Bool {
        guard let id = MessageWire.responseID(payload) else { return true }
        if id >= Self.firstCarriedID, carried[id] != nil {
            if let frame = try? GHFrame(serializedBytes: payload), case .response(let r)? = frame.kind, let result = r.result {
                carriedAnswered(s, id, result)
            }
            return false
        }
        return forwardedSends.isEmpty || sendAnswered(s, id: id, payload)
    }
}
