// Pins at the guild's home (docs/features.md "Pins"): pinning and unpinning
// a channel's messages and listing them. A pin is checked against the
// stored message (it is in the channel and not removed), stored, then
// told to the channel's members as CHANNEL_PINS_CHANGED. Changes to one
// channel's pins queue behind each other, so two pins cannot both take the
// last place. A removed message is unpinned with its removal
// (MessageOperations). Loop thread only.

import GuildhallCore
import GuildhallWire

final class Pinboard: HomePart {
    unowned let services: HomeServices
    private unowned let auditTrail: AuditTrail
    /// A message as a user sees it in an answer (Home.shown).
    private let shown: (MessageRecord, UserID) -> GHChannelMessage
    private(set) var pins = ChannelPins()

    init(services: HomeServices, auditTrail: AuditTrail, shown: @escaping (MessageRecord, UserID) -> GHChannelMessage) {
        self.services = services
        self.auditTrail = auditTrail
        self.shown = shown
    }

    func load(_ stored: [PinRecord]) { pins.load(stored) }

    /// What the channel's members are told of a pin or an unpin.
    func notice(_ uid: MessageUID, pinned: Bool, in c: ChannelRecord, by actor: UserID) -> Notice {
        Notice(.channelPinsChanged, .channel(c, isPublic: false), actor: actor) {
            $0.messageUid = uid
            $0.pinned = pinned
        }
    }

    /// A pin, once stored (`StateChange.pinned`).
    func pinned(_ pin: PinRecord) { pins.pinned(pin) }

    /// An unpin, once stored.
    func unpinned(_ uid: MessageUID, in channel: ChannelID) { pins.unpinned(uid, in: channel) }
}

extension Pinboard {
    func pin(_ r: GHPinMessage, id: UInt64, from s: HomeSession) {
        change(.pins(r.channelID), id: id, from: s) { settle throws(Failure) in
            let c = try self.directory.seen(by: s.user).channel(r.channelID)
            if let problem = self.pins.pinProblem(r.messageUid, in: c.id, limit: self.settings.pinsPerChannel) { throw problem }
            let audit = try self.auditTrail.entry(.messagePinned, in: c.serverID, by: s.user, target: "\(r.messageUid)", channel: c.id,
                                                       reason: r.reason)
            self.read(.messages(uids: [r.messageUid], viewer: s.user)) { found in
                guard found.error == nil else {
                    s.fail(id, Failure(.unavailable, "storage is unavailable; retry later"))
                    return settle(nil)
                }
                guard let m = found.messages.first, m.channelID == c.id else {
                    s.fail(id, .notFound("message \(r.messageUid) not found in channel \(c.id)"))
                    return settle(nil)
                }
                guard m.changes.removal == nil else {
                    s.fail(id, .conflict("message \(r.messageUid) was removed"))
                    return settle(nil)
                }
                let pin = PinRecord(channelID: c.id, messageUID: m.uid, pinnedBy: s.user, pinnedAt: self.now())
                var e = Effects(writes: [.pinned(pin), audit], reply: .ok)
                e.changes = [.pinned(pin)]
                e.notices = [self.notice(m.uid, pinned: true, in: c, by: s.user)]
                settle(e)
            }
        }
    }

    func unpin(_ r: GHUnpinMessage, id: UInt64, from s: HomeSession) {
        change(.pins(r.channelID), id: id, from: s) { settle throws(Failure) in
            let c = try self.directory.seen(by: s.user).channel(r.channelID)
            guard self.pins.isPinned(r.messageUid, in: c.id) else { throw Failure.notFound("message \(r.messageUid) is not pinned in channel \(c.id)") }
            let audit = try self.auditTrail.entry(.messageUnpinned, in: c.serverID, by: s.user, target: "\(r.messageUid)", channel: c.id,
                                                       reason: r.reason)
            var e = Effects(writes: [.unpinned(c.id, r.messageUid), audit], reply: .ok)
            e.changes = [.unpinned(c.id, r.messageUid)]
            e.notices = [self.notice(r.messageUid, pinned: false, in: c, by: s.user)]
            settle(e)
        }
    }

    func list(_ r: GHListPins, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            let c = try directory.seen(by: s.user).channel(r.channelID)
            let pinned = pins.pins(in: c.id)
            guard !pinned.isEmpty else { return s.respond(id, .pins(GHPinList())) }
            read(.messages(uids: pinned.map(\.messageUID), viewer: s.user)) { found in
                guard found.error == nil else { return s.fail(id, Failure(.unavailable, "storage is unavailable; retry later")) }
                let byUID = Dictionary(found.messages.map { ($0.uid, $0) }, uniquingKeysWith: { a, _ in a })
                var list = GHPinList()
                list.pins = pinned.compactMap { p in
                    guard let m = byUID[p.messageUID] else { return nil }
                    var pin = GHPin()
                    pin.message = self.shown(m, s.user)
                    pin.pinnedBy = p.pinnedBy
                    pin.pinnedAt = p.pinnedAt
                    return pin
                }
                s.respond(id, .pins(list))
            }
        }
    }

}

extension Pinboard {
    /// The channel's guild moved to another node: its pins go with it.
    func forget(channel: ChannelID) { pins.forget(channel: channel) }
}
