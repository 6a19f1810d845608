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
    /// This loop's index.
    let index: Int
    /// Every loop's inbox, by index (this loop's own too).
    let inboxes: [LoopInbox<LoopMessage>]
    /// Toward each other loop's gateway, by index; none for this loop.
    private var outboxes: [GatewayOutbox?]
    /// Per loop, as it last reported: bytes queued on its sessions, and bytes of events it had applied.
    private var queuedByLoop: [Int]
    private var appliedByLoop: [Int]

    init(index: Int, inboxes: [LoopInbox<LoopMessage>]) {
        self.index = index
        self.inboxes = inboxes
        outboxes = inboxes.indices.map { $0 == index ? nil : GatewayOutbox(from: index, to: inboxes[$0]) }
        queuedByLoop = Array(repeating: 0, count: inboxes.count)
        appliedByLoop = queuedByLoop
    }

    var count: Int { inboxes.count }

    /// How to hand a connection to each loop's gateway (a resume that arrived on the wrong loop).
    var handOffs: [@Sendable (HandOff) -> Void] {
        inboxes.map { target in { h in if !target.post(.handOff(h)) { Glibc.close(h.socket) } } }
    }

    /// The port of session `key` on another loop (the key's low byte), or nil when there is no such loop.
    func port(for key: UInt64) -> (any SessionPort)? {
        let index = Int(key & 0xff)
        guard index < outboxes.count, let outbox = outboxes[index] else { return nil }
        return RemoteSession(key: key, outbox: outbox)
    }

    /// Sends each loop what this home turn has for it.
    func postTurn() { for o in outboxes { o?.post() } }

    /// Tells every gateway (this loop's `local` at once, the others after what
    /// this turn already has for them) that `channel` is in `server`.
    func place(_ channel: ChannelID, in server: ServerID, local: HomeRoutes) {
        local.place(channel, in: server)
        for o in outboxes { o?.place(channel, in: server) }
    }

    /// A change to gateway `loop`'s half of the interest: applied at once on this loop, else in order with this turn's events.
    func interest(_ update: InterestUpdate, to loop: Int, local: Gateway) {
        if loop == index { local.interest.apply(update) } else { outboxes[loop]?.interest(update) }
    }

    /// A channel message for gateway `loop`'s `holders` sessions that hold the channel.
    func deliver(_ e: ChannelEvent, to loop: Int, holders: Int, local: Gateway) {
        if loop == index { local.limits.node.metrics.deliveries.increment(by: Int64(local.interest.deliver(e, on: local))) } else { outboxes[loop]?.deliver(e, holders: holders) }
    }

    /// Posts `message` to every loop (this one too), after what this turn has for them.
    func broadcast(_ message: LoopMessage) {
        postTurn()
        for inbox in inboxes { _ = inbox.post(message) }
    }

    /// Posts `message` to loop `index`.
    func post(_ message: LoopMessage, to index: Int) { _ = inboxes[index].post(message) }

    // MARK: Publisher pauses

    func reported(queued: Int, applied: Int, from index: Int) {
        queuedByLoop[index] = queued
        appliedByLoop[index] = applied
    }

    /// Bytes the other loops hold for this home's sessions: what each last
    /// reported queued, plus the event bytes sent to it since it last reported.
    var outboundBytes: Int {
        var bytes = 0
        for (i, o) in outboxes.enumerated() {
            guard let o else { continue }
            bytes += queuedByLoop[i] + (o.sentBytes &- appliedByLoop[i])
        }
        return bytes
    }
}
