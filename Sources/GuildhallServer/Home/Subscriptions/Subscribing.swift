// Subscribe requests, auto-subscribe mode and keeping subscriptions in step
// with membership (README "What clients receive"). Loop thread only.

import GuildhallCore
import GuildhallWire

/// Subscribe requests and auto-subscribe mode; the subscriptions themselves
/// are the home's interest index (`Home.book`).
final class Subscriptions: HomePart {
    unowned let services: HomeServices
    /// Mail for this home itself, handled as mail from another (Home.received).
    let mailHere: (HomeMail) -> Void
    /// At a user's home: the auto-subscribe ladder over all the user's channels, whatever their homes (AutoSubscribe.swift).
    var ladders: [UserID: AutoUser] = [:]
    /// At a guild's home: the levels the users' homes gave its channels, per user with an auto session here.
    var autoLevels: [UserID: [ChannelID: ChannelLevel]] = [:]
    /// Auto sessions whose first levels come from the user's home on another loop: what they are told with them.
    var autoStarting: [SessionKey: [GHSubscriptionEntry]] = [:]
    /// At a guild's home: per auto user, the channels auto mode cannot cover, as the user's home last said.
    var autoUncovered: [UserID: Int] = [:]
    /// At a user's home: the user's subscriptions on every home, for the limits (SubscriptionGrants.swift).
    var allowance = SubscriptionAllowance()

    init(services: HomeServices, mailHere: @escaping (HomeMail) -> Void) {
        self.services = services
        self.mailHere = mailHere
    }
}

extension Subscriptions {
    /// The exact refusal README "What clients receive" prescribes.
    static let autoModeRefusal = "manual subscribe is not allowed in auto subscribe mode"
    static let memberKinds: Set<SubscriptionKind> = [.channelMessages, .channelUnreadCount, .channelUnreadStatus, .serverNotifications, .channelTyping]
    static let maxTargetsPerRequest = 100

    // MARK: Requests

    /// `checkOnly`: says which targets could be taken (they exist and may be
    /// seen) without taking any (SubscriptionGrants.swift).
    func subscribe(_ r: GHSubscribe, id: UInt64, from s: HomeSession, checkOnly: Bool = false) {
        guard let kind = SubscriptionKind(rawValue: r.type.rawValue) else {
            s.fail(id, .badRequest("subscription type \(r.type.rawValue) is not one of 1-7"))
            return
        }
        guard r.targets.count <= Self.maxTargetsPerRequest else {
            s.fail(id, Failure(.limitReached, "at most \(Self.maxTargetsPerRequest) targets per request"))
            return
        }
        if s.autoSubscribe && Self.memberKinds.contains(kind) && kind != .channelTyping {
            s.fail(id, .forbidden(Self.autoModeRefusal))
            return
        }
        var result = GHSubscribeResult()
        let now = now()
        for t in r.targets {
            let target = SubscriptionTarget(server: t.serverID, channel: kind.targetsChannel ? t.channelID : 0)
            var entry = GHTargetResult()
            entry.target = t
            if r.operation == .unsubscribe {
                book.unsubscribe(s.key, kind, target)
            } else if let (status, message) = subscriptionProblem(kind, target, for: s) {
                entry.status = status
                entry.message = message
            } else if checkOnly {
                // Could be taken.
            } else if case .limitReached(let limit) = book.subscribe(s.key, kind, target, limit: settings.subscriptionLimits.limit(kind)) {
                entry.status = .targetLimitReached
                entry.message = Self.limitMessage(kind, limit)
            } else {
                subscribed(kind, target, session: s, now: now)
            }
            result.results.append(entry)
        }
        s.respond(id, .subscribe(result))
    }

    func setSubscribeMode(_ r: GHSetSubscribeMode, id: UInt64, from s: HomeSession) {
        if r.autoSubscribe && !s.autoSubscribe {
            enableAutoMode(s)
        } else if !r.autoSubscribe && s.autoSubscribe {
            s.autoSubscribe = false
            autoModeEnded(s.user)
        }
        s.respond(id, .ok(GHOk()))
    }

    /// Why `s` may not subscribe `kind` on `target`, or nil.
    private func subscriptionProblem(_ kind: SubscriptionKind, _ t: SubscriptionTarget, for s: HomeSession) -> (GHTargetStatus, String)? {
        if kind.isGuestKind {
            guard directory.server(t.server) != nil else { return (.targetNotFound, "server \(t.server) not found") }
            guard s.guestOf.contains(t.server) else {
                // A server that does not show itself to this user is answered as one that does not exist.
                do throws(Failure) { _ = try directory.decide.guestEntry(t.server, user: s.user) } catch where error.code == .notFound {
                    return (.targetNotFound, "server \(t.server) not found")
                } catch {}
                return (.targetNotMember, "enter server \(t.server) as a guest first")
            }
            if kind == .guestChannel {
                guard let c = directory.channel(t.channel), c.serverID == t.server, directory.guestVisible(c) else {
                    return (.targetNotFound, "channel \(t.channel) not found")
                }
            }
            return nil
        }
        // A guest sees the server but is not a member; to anyone else a server
        // or channel they may not see is answered as one that does not exist.
        if s.guestOf.contains(t.server), directory.permissions(of: s.user, in: t.server) == nil {
            return (.targetNotMember, "guests subscribe with the guest types; not a member of server \(t.server)")
        }
        if kind.targetsChannel {
            guard let c = directory.channel(t.channel), c.serverID == t.server, directory.canView(s.user, c) else {
                return (.targetNotFound, "channel \(t.channel) not found in server \(t.server)")
            }
        }
        guard directory.permissions(of: s.user, in: t.server) != nil else { return (.targetNotFound, "server \(t.server) not found") }
        return nil
    }

    /// Bookkeeping after a successful subscribe.
    private func subscribed(_ kind: SubscriptionKind, _ t: SubscriptionTarget, session s: HomeSession, now: UInt64) {
        switch kind {
        case .channelUnreadStatus:
            if let c = directory.channel(t.channel) { s.sentUnreadStatus[c.id] = services.unread(s.user, c, now: now).hasUnread }
        case .channelTyping:
            touchActivity(s.user, t.channel, now: now)
        default:
            break
        }
    }

    // MARK: Auto mode

    func hasAutoSessions(_ user: UserID) -> Bool { registry.sessions(of: user).values.contains { $0.autoSubscribe } }

    func autoSessions(_ user: UserID) -> [HomeSession] { registry.sessions(of: user).values.filter(\.autoSubscribe) }

    /// `always`: also without entries (the count auto mode cannot cover changed).
    func tellSubscriptionChanges(_ entries: [GHSubscriptionEntry], to sessions: [HomeSession], uncovered: Int? = nil, always: Bool = false) {
        guard !entries.isEmpty || always, !sessions.isEmpty else { return }
        var n = GHSystemNotification()
        n.kind = .subscriptionChanged
        n.time = now()
        n.subscriptions = entries
        let user = sessions[0].user
        n.autoUncovered = UInt32(clamping: uncovered ?? autoUncovered[user] ?? 0)
        sessions.push(n)
    }

    static func entry(_ kind: SubscriptionKind?, _ t: SubscriptionTarget) -> GHSubscriptionEntry {
        var e = GHSubscriptionEntry()
        e.type = kind.flatMap { GHSubscriptionType(rawValue: $0.rawValue) } ?? .unspecified
        e.target.serverID = t.server
        e.target.channelID = t.channel
        return e
    }

    // MARK: Membership

    /// A user became a member: auto sessions follow.
    func memberJoined(_ user: UserID, server: ServerID) {
        let sessions = autoSessions(user)
        guard !sessions.isEmpty else { return }
        for s in sessions { _ = book.subscribe(s.key, .serverNotifications, SubscriptionTarget(server: server), limit: .max) }
        tellSubscriptionChanges([Self.entry(.serverNotifications, SubscriptionTarget(server: server))], to: sessions)
        reassignAuto(user)
    }

    /// A user stopped being a member (left, kicked, banned, server deleted).
    func memberRemoved(_ user: UserID, server: ServerID) {
        for s in registry.sessions(of: user).values {
            book.drop(s.key, server: server, kinds: Self.memberKinds)
        }
        reassignAuto(user)
    }

    /// Channels were added to or removed from a server: auto users reassign.
    func channelsChanged(in server: ServerID) {
        var users: Set<UserID> = []
        for s in registry.onlineMembers(of: server).values where s.autoSubscribe { users.insert(s.user) }
        for u in users { reassignAuto(u) }
    }
}
