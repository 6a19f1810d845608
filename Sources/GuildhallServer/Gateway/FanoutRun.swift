// A run of channel messages delivered recipient by recipient (docs/performance.md):
// consecutive messages of one channel that reach a gateway in one go (a
// commit's worth from its home) wait here, and go out when anything else
// is about to reach a session of this gateway, or at the turn's flush. Each
// recipient then takes the whole run at once: its session, connection and
// write buffer are fetched once per run instead of once per message, and its
// frames are written one after another. Message by message, a fan-out to a
// thousand sessions touched every session's memory anew for each message,
// and those cache misses were most of a delivery's cost.
//
// Nothing overtakes the run: a session's event push or send, an interest
// update (which may change who holds the channel or a trailer's numbers), a
// session's end and the turn's flush each deliver it first, so every
// session gets its events in the order the home sent them, with the same
// trailers. Gateway loop only.

import GuildhallCore
import GuildhallLoop
import GuildhallWire

struct FanoutRun {
    private(set) var events: [ChannelEvent] = []

    var isEmpty: Bool { events.isEmpty }

    /// Whether `e` continues this run: the same channel, to the same audience.
    func continues(with e: ChannelEvent) -> Bool {
        guard let first = events.first else { return true }
        return first.channel.id == e.channel.id && first.toMembers == e.toMembers
    }

    mutating func append(_ e: ChannelEvent) { events.append(e) }

    mutating func take() -> [ChannelEvent] {
        defer { events.removeAll(keepingCapacity: true) }
        return events
    }
}

extension Gateway {
    /// Delivers the waiting run, if any: before anything else reaches a session here.
    @inline(__always)
    func settleFanout() {
        if !interest.run.isEmpty { interest.deliverRun(on: self) }
    }

    /// A change to the gateway's half of the interest, after the messages sent before it.
    func applyInterest(_ update: InterestUpdate) {
        settleFanout()
        interest.apply(update)
    }
}

extension GatewayInterest {
    /// A message to deliver: joins the run, or starts the next once what waited is delivered.
    func deliverInRun(_ e: ChannelEvent, on gateway: Gateway) {
        if !run.continues(with: e) { deliverRun(on: gateway) }
        run.append(e)
    }

    /// Every waiting message to each of its recipients in turn, each recipient's in order.
    func deliverRun(on gateway: Gateway) {
        let events = run.take()
        guard let first = events.first else { return }
        // Lent to each delivery without a reference count of their own (`events` holds them):
        // read out of the array, each payload was retained and released around every push.
        let payloads = events.map { Unmanaged.passUnretained($0.payload) }
        let now = gateway.clock()
        let displayCap = UInt64(gateway.settings.unreadDisplayCap), window = UInt64(gateway.settings.mentionWindowSeconds) * 1000
        // Rare: files get each reader's own links, and a small server's message skips the members it is hidden from.
        let links = events.contains { !$0.files.isEmpty } ? AttachmentLinks(gateway.settings) : nil
        let hides = events.contains { !$0.hiddenFrom.isEmpty }
        let flushing = gateway.flushList.recipientPacing
        var count = 0
        if first.toMembers {
            guard let sessions = members[first.channel.serverID] else { return }
            let start = PositionState(position: ReadPosition(), mentions: [])
            for (key, states) in sessions {
                let state = states[first.channel.id] ?? start
                gateway.lent[key]?._withUnsafeGuaranteedRef { s in
                    var pushed = false
                    for i in 0..<events.count where events[i].except != key {
                        if hides, events[i].hiddenFrom.contains(s.user) { continue }
                        push(events, payloads, i, to: s, state, now: now, displayCap: displayCap, window: window, links: links)
                        pushed = true
                    }
                    // Only a recipient: a sender with just its answer queued waits for the others' events.
                    if pushed, let flushing { gateway.flushRecipient(s, flushing) }
                }
            }
            count = sessions.count * events.count
        } else {
            guard let keys = holders[first.channel.id] else { return }
            for (key, state) in keys {
                gateway.lent[key]?._withUnsafeGuaranteedRef { s in
                    var pushed = false
                    for i in 0..<events.count where events[i].except != key {
                        push(events, payloads, i, to: s, state, now: now, displayCap: displayCap, window: window, links: links)
                        pushed = true
                    }
                    if pushed, let flushing { gateway.flushRecipient(s, flushing) }
                }
            }
            count = keys.count * events.count
        }
        gateway.limits.node.metrics.deliveries.increment(by: Int64(count))
    }

    /// Message `i` of the run to one recipient: the shared bytes with its own
    /// unread numbers (and cursor), and its links to the message's files. The run is read in place:
    /// `for e in events` copied each message per recipient (a retain and
    /// release of every reference it holds, the channel's strings among them).
    @inline(__always)
    private func push(_ events: [ChannelEvent], _ payloads: [Unmanaged<SharedBytes>], _ i: Int, to s: Session, _ state: PositionState,
                      now: UInt64, displayCap: UInt64, window: UInt64, links: AttachmentLinks?) {
        let u = state.unread(in: events[i].channel, now: now, displayCap: displayCap, mentionWindowMs: window)
        let unread = FrameEncoding.RecipientUnread(unreadCount: u.unreadCount, mentionedCount: u.mentionedCount,
                                                   ackTimestamp: u.ackTimestamp, readSeq: u.readSeq)
        let cursor = events[i].cursors.isEmpty ? 0 : events[i].cursors[s.user] ?? 0
        payloads[i]._withUnsafeGuaranteedRef { payload in
            if let links, !events[i].files.isEmpty {
                let own = links.payload(payload, adding: events[i].files, inUpdate: events[i].filesInUpdate, for: s.user, now: now)
                s.pushInRun(event: own, unread: unread, cursor: cursor)
            } else {
                s.pushInRun(event: payload, unread: unread, cursor: cursor)
            }
        }
    }
}
