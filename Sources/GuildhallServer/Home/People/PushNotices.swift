// Push at the user's home (docs/features.md "Push"): devices' push tokens
// (`RegisterPushToken`, stored before answered), and the notices owed when
// a mention or a direct message is filed for a user with no session online
// (the runner's `unreached`). None is owed to a user who chose
// DO_NOT_DISTURB or registered no device. Owed notices wait for the home's
// next tick (`position-flush-ms`), are read back from the store in one go
// (a message filed from another node, which this node's store lacks, comes
// with its item: `OwedMessage.carried`), and leave as one batch for the node's push gateway worker
// (PushGateway.swift); the loop never waits for the network. The unread
// count a notice carries is the user's mentions and direct messages since
// they were last online, kept in memory. Loop thread only.

import GuildhallCore
import GuildhallStore
import GuildhallWire

/// The message a push notice is owed for: in this node's store (read back at
/// the tick), or carried with an item from a home on another node.
enum OwedMessage {
    case stored(MessageUID)
    case carried(GHChannelMessage)

    var uid: MessageUID {
        switch self {
        case .stored(let uid): uid
        case .carried(let m): m.uid
        }
    }
}

final class PushNotices: HomePart {
    unowned let services: HomeServices
    /// Whether a user asked not to be disturbed, and the sender's name a notice shows.
    private unowned let presences: Presences
    private unowned let profiles: Profiles
    /// The worker that posts to the push gateway; nil while `push-gateway-url` is unset,
    /// and then the runner is not asked to look for users without a session.
    var gateway: PushGateway? {
        didSet { runner.unreached = gateway == nil ? nil : { [unowned self] user, message in reached(user, message) } }
    }
    /// The devices of users homed here that registered.
    private var devices: [UserID: [DeviceID: PushRegistration]] = [:]
    /// Per user homed here, mentions and direct messages since they were last online.
    private var unread: [UserID: UInt64] = [:]
    /// Notices owed since the last tick, in order.
    private var owed: [(user: UserID, message: OwedMessage, unread: UInt64)] = []

    /// Most notices in one post.
    static let batchLimit = 100

    init(services: HomeServices, presences: Presences, profiles: Profiles) {
        self.services = services
        self.presences = presences
        self.profiles = profiles
    }

    func load(_ stored: [PushRegistration]) { for r in stored { devices[r.user, default: [:]][r.device] = r } }

    /// Forgets the devices of the users `drop` picks (their home moved to another node).
    func forget(where drop: (UserID) -> Bool) { devices = devices.filter { !drop($0.key) } }
}

// MARK: Requests (at the user's home)

extension PushNotices {
    func register(_ r: GHRegisterPushToken, id: UInt64, from s: HomeSession) {
        let registration = PushRegistration(user: s.user, device: s.device, platform: r.platform, token: r.token, previews: r.previews,
                                            updatedAt: now())
        if let problem = registration.problem { return s.fail(id, .badRequest(problem)) }
        var e = Effects(writes: [.pushRegistered(registration)], reply: .ok)
        e.changes = [.pushRegistered(registration)]
        runner.carryOut(e, answering: id, to: s)
    }

    func unregister(id: UInt64, from s: HomeSession) {
        guard devices[s.user]?[s.device] != nil else { return s.respond(id, .ok(GHOk())) }
        var e = Effects(writes: [.pushUnregistered(s.user, s.device)], reply: .ok)
        e.changes = [.pushUnregistered(s.user, s.device)]
        runner.carryOut(e, answering: id, to: s)
    }

    /// A device's token, once stored (`StateChange.pushRegistered`).
    func registered(_ r: PushRegistration) { devices[r.user, default: [:]][r.device] = r }

    /// A device's token let go, once stored.
    func unregistered(_ user: UserID, _ device: DeviceID) {
        devices[user]?[device] = nil
        if devices[user]?.isEmpty == true { devices[user] = nil }
    }
}

// MARK: Owing and sending

extension PushNotices {
    /// A mention or direct message was filed for `user` (homed here), who has no session online.
    func reached(_ user: UserID, _ message: OwedMessage) {
        guard devices[user] != nil, presences.book.choice(of: user).status != .doNotDisturb else { return }
        let count = (unread[user] ?? 0) + 1
        unread[user] = count
        owed.append((user, message, count))
    }

    /// A session opened here: at its user's home, the count starts again.
    func opened(_ s: HomeSession) { unread[s.user] = nil }

    /// Each tick of the home's timer: what is owed is read back and handed to the worker.
    func flush() {
        guard let gateway, !owed.isEmpty else { return }
        let batch = owed
        owed.removeAll()
        var stored: Set<MessageUID> = []
        for o in batch { if case .stored(let uid) = o.message { stored.insert(uid) } }
        read(.messages(uids: Array(stored))) { [self] found in
            guard found.error == nil else {
                log.warnRepeated("push notices not read back; they are dropped", ["count": batch.count])
                services.metrics.pushesDropped.increment(by: Int64(batch.count))
                return
            }
            var byUID: [MessageUID: MessageRecord] = [:]
            for m in found.messages { byUID[m.uid] = m }
            let notices = batch.compactMap { o -> PushNotice? in
                // The device forgotten, or a stored message removed meanwhile: nothing to say.
                guard let mine = devices[o.user], !mine.isEmpty else { return nil }
                switch o.message {
                case .stored(let uid):
                    guard let m = byUID[uid], m.changes.removal == nil else { return nil }
                    return PushNotice(m, for: o.user, devices: Array(mine.values), senderName: senderName(m.sender), unread: o.unread)
                case .carried(let m):
                    return PushNotice(uid: m.uid, serverID: m.serverID, channelID: m.channelID, sender: m.senderID, text: m.body.text,
                                      for: o.user, devices: Array(mine.values), senderName: senderName(m.senderID), unread: o.unread)
                }
            }
            let now = now()
            for start in stride(from: 0, to: notices.count, by: Self.batchLimit) {
                gateway.post(PushBatch(notifications: Array(notices[start..<min(start + Self.batchLimit, notices.count)]), sentAt: now))
            }
        }
    }

    /// How the sender shows, when their home is this one and they chose a name.
    private func senderName(_ sender: UserID) -> String { profiles.profiles[sender]?.displayName ?? "" }
}
