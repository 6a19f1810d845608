// Offline sync (docs/features.md): on login the session gets what was addressed to
// its user since its device last synced, in packages the client
// acknowledges, then "sync completed"; live events wait until then. Also the
// inbox those items come from: mentions, targeted notifications, read
// positions and received status, each written durably before it is
// delivered live, with an ord that orders the user's items. Direct messages
// are shown as the user home says (`home.userHome`). Loop thread only.
//
// Callbacks hold their session strongly (a weak reference would move every
// session's reference count to a side table and slow every fan-out retain);
// they check that it is still logged in.
//
// Why the horizon: a session logging in gets items with ord up to the last
// one already delivered live (`EffectRunner.inboxFanned`) from the store, and every later
// one live (held until sync completes), so none is missed or doubled.

import GuildhallCore
import GuildhallLoop
import GuildhallStore
import GuildhallWire

final class OfflineDelivery: HomePart {
    unowned let services: HomeServices
    /// How a direct message and a channel message's receipts look to the user
    /// (built after this part, and handed to it then: `show`).
    private unowned var userHome: UserHome!
    private unowned var groupReceipts: GroupReceipts!
    /// Sessions whose acknowledged sync cursor moved and is not written yet.
    private var cursorOwed: Set<SessionKey> = []
    /// Offline packages waiting for other homes to dress their items, by token, with the items each was asked.
    private var dressings: [UInt64: (PackageWaiting, [Int])] = [:]
    private var nextDressing: UInt64 = 0

    init(services: HomeServices) { self.services = services }

    /// The parts built after this one that show its items.
    func show(_ userHome: UserHome, _ groupReceipts: GroupReceipts) {
        self.userHome = userHome
        self.groupReceipts = groupReceipts
    }
}

extension OfflineDelivery {
    // MARK: Sync

    func beginSync(_ s: HomeSession) {
        // An empty commit after every earlier write: the device cursor of a
        // session that just ended is in the store before it is read.
        commit([], from: nil) { _ in
            guard s.isLoggedIn, s.sync != nil else { return }
            self.fetchPackage(for: s)
        }
    }

    private func fetchPackage(for s: HomeSession) {
        guard let sync = s.sync else { return }
        read(.inbox(user: s.user, device: s.device, after: sync.after, upTo: sync.horizon, limit: settings.syncPackageSize)) { result in
            guard s.isLoggedIn, s.sync != nil else { return }
            if let error = result.error {
                self.log.error("offline sync read failed; completing without it", ["user": s.user, "error": error.description])
                self.completeSync(s)
                return
            }
            self.deliverPackage(result, to: s)
        }
    }

    private func deliverPackage(_ result: ReadResult, to s: HomeSession) {
        guard var sync = s.sync else { return }
        if sync.after == nil { s.syncedFrom(result.cursor) }
        sync.after = result.inbox.last?.ord ?? sync.after ?? result.cursor
        sync.more = result.hasMore
        s.sync = sync
        let now = now()
        var package = OfflinePackage(items: result.inbox, session: s)
        // Items of guilds homed elsewhere are dressed there (HomeMail.swift).
        var elsewhere: [Int: [Int]] = [:]
        for (i, item) in result.inbox.enumerated() {
            if let h = guildHome(of: item), h != services.index {
                elsewhere[h, default: []].append(i)
            } else {
                package.events[i] = offlineEvent(item, for: s.user, now: now)
            }
        }
        guard !elsewhere.isEmpty else { return send(package) }
        package.waiting = elsewhere.count
        let waiting = PackageWaiting(package)
        for (h, indices) in elsewhere.sorted(by: { $0.key < $1.key }) {
            nextDressing += 1
            dressings[nextDressing] = (waiting, indices)
            services.links.post(.mail(services.index, [.dress(user: s.user, items: indices.map { result.inbox[$0] }, token: nextDressing)]), to: h)
        }
    }

    /// The home of the guild an item needs, or nil when the user's home can dress it.
    private func guildHome(of item: InboxItem) -> Int? {
        if let m = item.message { return m.serverID == 0 ? nil : services.place(guild: m.serverID) }
        guard let stored = try? GHEvent(serializedBytes: item.event), case .unreadChanged(let u)? = stored.body else { return nil }
        return services.place(guild: u.serverID)
    }

    /// Another home asks how offline items of `user` look with its guild state.
    func dress(_ items: [InboxItem], for user: UserID, token: UInt64, from other: Int) {
        let now = now()
        let events = items.map { offlineEvent($0, for: user, now: now) }
        services.links.post(.mail(services.index, [.dressed(token: token, events: events)]), to: other)
    }

    /// A guild's home dressed some of a package's items.
    func dressed(_ token: UInt64, _ events: [GHEvent?]) {
        guard let (waiting, indices) = dressings.removeValue(forKey: token) else { return }
        for (i, e) in zip(indices, events) { waiting.package.events[i] = e }
        waiting.package.waiting -= 1
        if waiting.package.waiting == 0 { send(waiting.package) }
    }

    /// Sends a package whose items are all dressed (or reads the next when none applies).
    private func send(_ package: OfflinePackage) {
        let s = package.session
        guard s.isLoggedIn, var sync = s.sync else { return }
        let events: [(UInt64, GHEvent)] = zip(package.items, package.events).compactMap { item, e in
            guard var e else { return nil }
            e.cursor = item.ord
            return (item.ord, e)
        }
        if events.isEmpty {
            if sync.more { fetchPackage(for: s) } else { completeSync(s) }
            return
        }
        for (i, (ord, var e)) in events.enumerated() {
            e.offline = true
            e.left = UInt32(events.count - 1 - i)
            e.morePackages = sync.more
            s.send(EventEncoding.shared(e), ord: ord)
        }
        sync.items += events.count
        services.metrics.syncPackages.increment()
        services.metrics.syncItems.increment(by: Int64(events.count))
        sync.awaitingAck = true
        s.sync = sync
        s.port.packageSent()
    }

    /// The event an inbox item becomes, or nil when it no longer applies.
    private func offlineEvent(_ item: InboxItem, for user: UserID, now: UInt64) -> GHEvent? {
        var e = GHEvent()
        if let m = item.message, m.serverID == 0 {
            let directs = userHome!
            if directs.directs[m.channelID] == nil, m.sender != user {
                // The pair's conversation lives at the other user's home; the item was addressed to this user.
                e.message = services.withFiles(GHChannelMessage(m), m, to: user)
                e.message.recipientID = user
                return e
            }
            guard directs.canSeeDirect(m, user) else { return nil }
            e.message = directs.directMessage(m, for: user)
            return e
        }
        if let m = item.message {
            guard let c = directory.channel(m.channelID), directory.canView(user, c) else { return nil }
            e.message = services.withFiles(groupReceipts.withReceipts([GHChannelMessage(m)], for: user)[0], m, to: user)
            return e
        }
        guard let stored = try? GHEvent(serializedBytes: item.event), stored.body != nil else { return nil }
        e.body = stored.body
        if case .unreadChanged(let old)? = stored.body {
            // A read position moved on another device: send the channel's unread info as it is now.
            guard let c = try? directory.seen(by: user).channel(old.channelID) else { return nil }
            e.unreadChanged = GHUnreadInfo(services.unread(user, c, now: now))
        }
        return e
    }

    private func completeSync(_ s: HomeSession) {
        var done = GHSyncCompleted()
        done.items = UInt32(s.sync?.items ?? 0)
        s.send(GHEvent.OneOf_Body.syncCompleted(done).sharedPayload)
        s.finishSync()
    }

    // MARK: Acknowledgements and cursors

    /// The client acknowledged events (its gateway reports it): its inbox
    /// position, and whether that completed the offline package in flight.
    func acknowledged(_ s: HomeSession, ackedOrd: UInt64, packageAcked: Bool) {
        if s.acknowledged(upTo: ackedOrd) { cursorOwed.insert(s.key) }
        guard packageAcked, let sync = s.sync, sync.awaitingAck else { return }
        s.sync?.awaitingAck = false
        // The package is the client's: its cursor is durable before the next one goes.
        let write = cursorWrite(of: s)
        commit(write.map { [$0] } ?? [], from: nil) { _ in
            guard s.isLoggedIn, let sync = s.sync else { return }
            if sync.more { self.fetchPackage(for: s) } else { self.completeSync(s) }
        }
    }

    private func cursorWrite(of s: HomeSession) -> StoreWrite? {
        guard let cursor = s.unwrittenCursor() else { return nil }
        cursorOwed.remove(s.key)
        return .syncCursor(s.user, s.device, cursor)
    }

    /// Writes the session's cursor if it moved (when it ends).
    func saveCursor(of s: HomeSession) {
        if let w = cursorWrite(of: s) { commit([w], from: nil) { _ in } }
    }

    /// Writes moved cursors (with the position timer); when the commit fails, they are owed again.
    func flushCursors() {
        guard !cursorOwed.isEmpty else { return }
        let owed = cursorOwed.compactMap { registry.all[$0] }.compactMap { s in cursorWrite(of: s).map { (s, $0) } }
        cursorOwed.removeAll()
        guard !owed.isEmpty else { return }
        commit(owed.map(\.1), from: nil) { error in
            guard error != nil else { return }
            for (s, write) in owed where s.isLoggedIn {
                if case .syncCursor(_, _, let ord) = write { s.cursorNotWritten(ord) }
                self.cursorOwed.insert(s.key)
            }
        }
    }
}

/// An offline package being dressed: its items, their events so far, and
/// how many homes have yet to answer.
struct OfflinePackage {
    let items: [InboxItem]
    var events: [GHEvent?]
    var waiting = 0
    let session: HomeSession

    init(items: [InboxItem], session: HomeSession) {
        self.items = items
        events = Array(repeating: nil, count: items.count)
        self.session = session
    }
}

/// A package shared by the homes' answers.
final class PackageWaiting {
    var package: OfflinePackage
    init(_ package: OfflinePackage) { self.package = package }
}
