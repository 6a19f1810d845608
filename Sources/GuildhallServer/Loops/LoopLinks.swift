// One loop's links to the others (`loops` > 1): every loop's inbox, an
// outbox toward each other loop's gateway for what this loop's home sends
// its sessions (one post per home turn), and what each of those loops last
// reported about its outbound bytes (for publisher pauses). Loop thread
// only; the other loops are reached only through their inboxes.

import Dispatch
import Glibc
import GuildhallCore
import GuildhallLoop

final class LoopLinks {
    /// This loop's index, and this node's id.
    let index: Int
    let node: Int
    /// The other nodes, in a cluster (NodeBus.swift).
    let bus: NodeBus?
    /// Toward gateways on other nodes, by place (Place.swift), made when first needed.
    private var remoteOutboxes: [Int: GatewayOutbox] = [:]
    /// Every loop's inbox, by index (this loop's own too).
    let inboxes: [LoopInbox<LoopMessage>]
    /// Toward each other loop's gateway, by index; none for this loop.
    private var outboxes: [GatewayOutbox?]

    init(index: Int, inboxes: [LoopInbox<LoopMessage>], node: Int = 0, bus: NodeBus? = nil) {
        self.index = index
        self.inboxes = inboxes
        self.node = node
        self.bus = bus
        outboxes = inboxes.indices.map { $0 == index ? nil : GatewayOutbox(from: index, to: inboxes[$0]) }
    }

    /// Where session `key`'s gateway is.
    @inline(__always)
    func place(ofSession key: UInt64) -> Int { Place.of(session: key, me: node) }

    /// The outbox toward the gateway at `place` (another loop here, or a loop of another node).
    private func outbox(_ place: Int) -> GatewayOutbox? {
        guard Place.isRemote(place) else { return place < outboxes.count ? outboxes[place] : nil }
        if let o = remoteOutboxes[place] { return o }
        guard let bus else { return nil }
        let from = index
        let o = GatewayOutbox(from: from, sink: { bus.post($0, to: place) })
        remoteOutboxes[place] = o
        return o
    }

    var count: Int { inboxes.count }

    /// How to hand a connection to each loop's gateway (a resume that arrived on the wrong loop).
    var handOffs: [@Sendable (HandOff) -> Void] {
        inboxes.map { target in { h in if !target.post(.handOff(h)) { Glibc.close(h.socket) } } }
    }

    /// The port of session `key` on another loop or node, or nil when there is no such place.
    func port(for key: UInt64) -> (any SessionPort)? {
        guard let outbox = outbox(place(ofSession: key)) else { return nil }
        return RemoteSession(key: key, outbox: outbox)
    }

    /// Sends each loop and node what this home turn has for it.
    func postTurn() {
        for o in outboxes { o?.post() }
        for o in remoteOutboxes.values { o.post() }
    }

    /// Tells every gateway (this loop's `local` at once, the others after what
    /// this turn already has for them) that `channel` is in `server`.
    func place(_ channel: ChannelID, in server: ServerID, local: HomeRoutes) {
        local.place(channel, in: server)
        for o in outboxes { o?.place(channel, in: server) }
    }

    /// A change to gateway `loop`'s half of the interest: applied at once on this loop, else in order with this turn's events.
    func interest(_ update: InterestUpdate, to loop: Int, local: Gateway) {
        if loop == index { local.applyInterest(update) } else { outbox(loop)?.interest(update) }
    }

    /// A channel message for gateway `loop`'s `holders` sessions that hold the channel.
    func deliver(_ e: ChannelEvent, to loop: Int, holders: Int, local: Gateway) {
        if loop == index { local.interest.arrived(e, from: index, on: local) } else { outbox(loop)?.deliver(e, holders: holders) }
    }

    /// Tells gateway `loop` that every message it asked for again was sent (ChannelGaps).
    func replayed(_ channel: ChannelID, upTo: UInt64, to loop: Int, local: Gateway) {
        if loop == index { local.interest.gapFilled(channel, upTo: upTo, on: local) } else { outbox(loop)?.replayed(channel, upTo: upTo) }
    }

    /// A webhook post's answer, for the door of the gateway at `loop`.
    func webhookAnswered(token: UInt64, status: Int, body: String, to loop: Int, local: Gateway) {
        if loop == index {
            local.webSocketDoor.webhooks.answered(token: token, status: status, body: body)
        } else {
            outbox(loop)?.webhookAnswered(token: token, status: status, body: body)
        }
    }

    /// Posts `message` to every loop (this one too), after what this turn has for them.
    func broadcast(_ message: LoopMessage) {
        postTurn()
        for inbox in inboxes { _ = inbox.post(message) }
    }

    /// Posts `message` to the loop at `place` (of this node or, through the bus, another).
    func post(_ message: LoopMessage, to place: Int) {
        if Place.isRemote(place) { bus?.post(message, to: place) } else { _ = inboxes[place].post(message) }
    }

    // MARK: Publisher pauses

    func reported(queued: Int, applied: Int, from place: Int) {
        outbox(place)?.reported(queued: queued, applied: applied)
    }

    /// Bytes the other loops hold for this home's sessions: what each last
    /// reported queued, plus the event bytes sent to it since it last reported.
    /// (Read at every send: kept on the outboxes, not in dictionaries by place.)
    var outboundBytes: Int {
        var bytes = 0
        for o in outboxes { if let o { bytes += o.unappliedBytes } }
        for o in remoteOutboxes.values { bytes += o.unappliedBytes }
        return bytes
    }
}
