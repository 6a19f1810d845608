// A session whose gateway is another loop, as its home reaches it: each
// `SessionPort` call becomes a command in that gateway's outbox, and the
// outbox goes to the gateway's loop once per home turn, in order. A shared
// event is referenced, not copied: every recipient on that loop gets the
// same bytes and its own trailer there. Home loop only.

import GuildhallCore
import GuildhallLoop
import GuildhallWire

/// What one other loop's gateway gets from this home turn, in order.
final class GatewayOutbox {
    private var steps: [GatewayStep] = []
    /// How many steps the last post held: the next turn's array is made with that room
    /// (up to a bound) at its first step, instead of growing from empty by doubling.
    private var lastPosted = 0
    /// Recipients of the last run: the next run's room, likewise.
    private var lastRun = 0
    /// The run of one event being gathered: its bytes and recipients so far.
    private var runPayload: SharedBytes?
    private var runRecipients: [EventRecipient] = []
    /// The sending home's loop, and where the gateway's messages go (its loop's inbox, or the node bus).
    private let from: Int
    private let sink: @Sendable (LoopMessage) -> Void
    /// Bytes of events sent to that loop so far; what it has not yet reported applied counts toward publisher pauses.
    private(set) var sentBytes = 0
    /// What that loop last reported: bytes queued on its sessions, and bytes of events it had applied.
    private var reportedQueued = 0, reportedApplied = 0

    func reported(queued: Int, applied: Int) {
        reportedQueued = queued
        reportedApplied = applied
    }

    /// Bytes that loop holds for this home's sessions: what it reported queued, plus what was sent since it applied.
    var unappliedBytes: Int { reportedQueued + (sentBytes &- reportedApplied) }

    init(from: Int, to inbox: LoopInbox<LoopMessage>) {
        self.from = from
        sink = { _ = inbox.post($0) }
    }

    /// Toward a gateway on another node, through the node bus.
    init(from: Int, sink: @escaping @Sendable (LoopMessage) -> Void) {
        self.from = from
        self.sink = sink
    }

    /// A live event for session `key`: joins the run of the same event, or starts one.
    @inline(__always)
    func push(_ key: UInt64, _ payload: SharedBytes, _ unread: FrameEncoding.RecipientUnread?, cursor: UInt64) {
        sentBytes &+= payload.count + Gateway.eventOverhead
        if runPayload !== payload {
            closeRun()
            runPayload = payload
            runRecipients.reserveCapacity(min(lastRun, 4096))
        }
        runRecipients.append(EventRecipient(key: key, unread: unread, cursor: cursor))
    }

    func add(_ key: UInt64, _ command: SessionCommand) {
        closeRun()
        if case .send(let payload, _) = command { sentBytes &+= payload.count + Gateway.eventOverhead }
        append(.command(SessionOrder(key: key, command: command)))
    }

    func interest(_ update: InterestUpdate) {
        closeRun()
        append(.interest(update))
    }

    func deliver(_ e: ChannelEvent, holders: Int) {
        closeRun()
        sentBytes &+= (e.payload.count + Gateway.eventOverhead) * holders
        append(.channelEvent(e))
    }

    func place(_ channel: ChannelID, in server: ServerID) {
        closeRun()
        append(.place(channel, server))
    }

    func replayed(_ channel: ChannelID, upTo: UInt64) {
        closeRun()
        append(.replayed(channel, upTo: upTo))
    }

    func webhookAnswered(token: UInt64, status: Int, body: String) {
        closeRun()
        append(.webhookAnswered(token: token, status: status, body: body))
    }

    private func append(_ step: GatewayStep) {
        if steps.capacity == 0 { steps.reserveCapacity(min(lastPosted, 4096)) }
        steps.append(step)
    }

    private func closeRun() {
        guard let payload = runPayload else { return }
        append(.event(payload, runRecipients))
        lastRun = runRecipients.count
        runPayload = nil
        runRecipients = []
    }

    /// Sends what this turn gathered.
    func post() {
        closeRun()
        guard !steps.isEmpty else { return }
        sink(.fromHome(from, steps))
        lastPosted = steps.count
        steps = []
    }
}

final class RemoteSession: SessionPort {
    let key: UInt64
    private unowned let outbox: GatewayOutbox

    init(key: UInt64, outbox: GatewayOutbox) {
        self.key = key
        self.outbox = outbox
    }

    func push(event payload: SharedBytes, unread: FrameEncoding.RecipientUnread?, cursor: UInt64) {
        outbox.push(key, payload, unread, cursor: cursor)
    }
    func send(_ payload: SharedBytes, ord: UInt64) { outbox.add(key, .send(payload, ord: ord)) }
    func respond(encoded payload: [UInt8]) { outbox.add(key, .respond(payload)) }
    func answerPart(_ id: UInt64, _ part: GatherPart) { outbox.add(key, .part(id, part)) }
    func typing(_ entry: GHChannelTypers) { outbox.add(key, .typing(entry)) }
    func presence(_ list: [GHPresence]) { outbox.add(key, .presence(list)) }
    func admitted(user: UserID, device: DeviceID, sessionID: String) {
        outbox.add(key, .admitted(user: user, device: device, sessionID: sessionID))
    }
    func syncedFrom(_ cursor: UInt64) { outbox.add(key, .syncedFrom(cursor)) }
    func noteInboxItem(_ ord: UInt64) { outbox.add(key, .noteInboxItem(ord)) }
    func packageSent() { outbox.add(key, .packageSent) }
    func finishSync() { outbox.add(key, .finishSync) }
    func homePauses(_ reason: ReadPauses) { outbox.add(key, .pause(reason)) }
    func homeResumes(_ reason: ReadPauses) { outbox.add(key, .resume(reason)) }
    func end(_ reason: GHCloseReason?, _ message: String) { outbox.add(key, .end(reason, message)) }
}

extension Gateway {
    /// Bytes counted per event besides its payload (framing and trailer), on both sides alike.
    static let eventOverhead = 32

    /// Carries out what a home sent this gateway's sessions. A command for a
    /// session that is gone is dropped; an admission for one tells the homes
    /// it ended, so they forget it.
    func carryOut(_ steps: [GatewayStep], from home: Int) {
        // Summed here and added once: a dictionary update per step was a hash per message.
        var applied = 0
        defer { appliedBytes[home, default: 0] &+= applied }
        for step in steps {
            switch step {
            case .event(let payload, let recipients):
                applied &+= (payload.count + Self.eventOverhead) * recipients.count
                for r in recipients {
                    lent[r.key]?._withUnsafeGuaranteedRef { $0.push(event: payload, unread: r.unread, cursor: r.cursor) }
                }
            case .command(let o):
                if case .send(let payload, _) = o.command { applied &+= payload.count + Self.eventOverhead }
                carryOut(o, from: home)
            case .place(let channel, let server):
                routes.place(channel, in: server)
            case .interest(let update):
                applyInterest(update)
            case .channelEvent(let e):
                // Counted as the home counted it (its audience here), even when held behind a gap; a replay not at all.
                let audience = e.replayed ? 0 : interest.audience(of: e)
                interest.arrived(e, from: home, on: self)
                applied &+= (e.payload.count + Self.eventOverhead) * audience
            case .replayed(let channel, let upTo):
                interest.gapFilled(channel, upTo: upTo, on: self)
            case .webhookAnswered(let token, let status, let body):
                webSocketDoor.webhooks.answered(token: token, status: status, body: body)
            }
        }
    }

    private func carryOut(_ o: SessionOrder, from home: Int) {
        guard let s = sessions[o.key] else {
            if case .admitted = o.command { routes.tellEveryHome { $0.sessionEnded(o.key, ackedOrd: 0, reconnecting: false) } }
            if case .part(let gid, _) = o.command { routes.gathers.forget(gid) }
            return
        }
        switch o.command {
        case .send(let payload, let ord): s.send(payload, ord: ord)
        case .respond(let payload):
            s.respond(encoded: payload)
            s.homeAnswered()
        case .part(let id, let part): routes.partArrived(id, part, for: s)
        case .typing(let entry): s.typing(entry)
        case .admitted(let user, let device, let sessionID): s.admitted(user: user, device: device, sessionID: sessionID)
        case .syncedFrom(let cursor): s.syncedFrom(cursor)
        case .noteInboxItem(let ord): s.noteInboxItem(ord)
        case .packageSent: s.packageSent()
        case .finishSync: s.finishSync()
        case .pause(let reason): s.homePaused(reason, by: home)
        case .resume(let reason): s.homeResumed(reason, by: home)
        case .end(let reason, let message): s.end(reason, message)
        case .presence(let list): s.presence(list)
        }
    }
}
