// A session whose gateway is another loop, as its home reaches it: each
// `SessionPort` call becomes a command in that gateway's outbox, and the
// outbox goes to the gateway's loop once per home turn, in order. A shared
// event is referenced, not copied: every recipient on that loop gets the
// same bytes and its own trailer there. Home loop only.

import GuildhallCore
import GuildhallLoop
import GuildhallWire

/// The commands for one other loop's gateway, gathered during a home turn.
final class GatewayOutbox {
    private var orders: [SessionOrder] = []
    private let inbox: LoopInbox<GatewayMessage>
    /// Bytes of events sent to that loop so far; what it has not yet reported applied counts toward publisher pauses.
    var sentBytes = 0

    init(inbox: LoopInbox<GatewayMessage>) { self.inbox = inbox }

    @inline(__always)
    func add(_ key: UInt64, _ command: SessionCommand) { orders.append(SessionOrder(key: key, command: command)) }

    /// Sends what this turn gathered.
    func post() {
        guard !orders.isEmpty else { return }
        _ = inbox.post(.commands(orders))
        orders = []
    }

    /// A message of its own for that loop, after what was gathered.
    func post(_ message: GatewayMessage) {
        post()
        _ = inbox.post(message)
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
        outbox.sentBytes &+= payload.count + Gateway.eventOverhead
        outbox.add(key, .push(payload, unread, cursor: cursor))
    }
    func send(_ payload: SharedBytes, ord: UInt64) {
        outbox.sentBytes &+= payload.count + Gateway.eventOverhead
        outbox.add(key, .send(payload, ord: ord))
    }
    func respond(encoded payload: [UInt8]) { outbox.add(key, .respond(payload)) }
    func admitted(user: UserID, device: DeviceID, sessionID: String) {
        outbox.add(key, .admitted(user: user, device: device, sessionID: sessionID))
    }
    func syncedFrom(_ cursor: UInt64) { outbox.add(key, .syncedFrom(cursor)) }
    func noteInboxItem(_ ord: UInt64) { outbox.add(key, .noteInboxItem(ord)) }
    func packageSent() { outbox.add(key, .packageSent) }
    func finishSync() { outbox.add(key, .finishSync) }
    func pauseReading(_ reason: ReadPauses) { outbox.add(key, .pause(reason)) }
    func resumeReading(_ reason: ReadPauses) { outbox.add(key, .resume(reason)) }
    func end(_ reason: GHCloseReason?, _ message: String) { outbox.add(key, .end(reason, message)) }
}

extension Gateway {
    /// Bytes counted per event besides its payload (framing and trailer), on both sides alike.
    static let eventOverhead = 32

    /// Carries out a home's commands for this gateway's sessions. A command
    /// for a session that is gone is dropped; an admission for one tells the
    /// home it ended, so the home forgets it.
    func carryOut(_ orders: [SessionOrder]) {
        for o in orders {
            guard let s = sessions[o.key] else {
                switch o.command {
                case .admitted: home.sessionEnded(o.key, ackedOrd: 0)
                case .push(let payload, _, _), .send(let payload, _): appliedBytes &+= payload.count + Self.eventOverhead
                default: break
                }
                continue
            }
            switch o.command {
            case .push(let payload, let unread, let cursor):
                appliedBytes &+= payload.count + Self.eventOverhead
                s.push(event: payload, unread: unread, cursor: cursor)
            case .send(let payload, let ord):
                appliedBytes &+= payload.count + Self.eventOverhead
                s.send(payload, ord: ord)
            case .respond(let payload):
                s.respond(encoded: payload)
                answered(s)
            case .admitted(let user, let device, let sessionID): s.admitted(user: user, device: device, sessionID: sessionID)
            case .syncedFrom(let cursor): s.syncedFrom(cursor)
            case .noteInboxItem(let ord): s.noteInboxItem(ord)
            case .packageSent: s.packageSent()
            case .finishSync: s.finishSync()
            case .pause(let reason): s.pauseReading(reason)
            case .resume(let reason): s.resumeReading(reason)
            case .end(let reason, let message): s.end(reason, message)
            }
        }
    }
}
