// Offline sync (MISSION §7): on login the session gets what was addressed to
// its user since its device last synced, in packages the client
// acknowledges, then "sync completed"; live events wait until then. Also the
// inbox those items come from: mentions, targeted notifications, read
// positions and received status, each written durably before it is
// delivered live, with an ord that orders the user's items. Loop thread only.
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

extension UserHome {
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
        guard let before = s.sync else { return }
        if before.after == nil { s.syncedFrom(result.cursor) }
        var sync = before
        sync.after = result.inbox.last?.ord ?? sync.after ?? result.cursor
        let now = now()
        let events: [(UInt64, GHEvent)] = result.inbox.compactMap { item in
            guard var e = offlineEvent(item, for: s.user, now: now) else { return nil }
            e.cursor = item.ord
            return (item.ord, e)
        }
        sync.more = result.hasMore
        if events.isEmpty {
            s.sync = sync
            if result.hasMore { fetchPackage(for: s) } else { completeSync(s) }
            return
        }
        for (i, (ord, var e)) in events.enumerated() {
            e.offline = true
            e.left = UInt32(events.count - 1 - i)
            e.morePackages = result.hasMore
            s.send(EventEncoding.shared(e), ord: ord)
        }
        sync.items += events.count
        sync.awaitingAck = true
        s.sync = sync
        s.port.packageSent()
    }

    /// The event an inbox item becomes, or nil when it no longer applies.
    private func offlineEvent(_ item: InboxItem, for user: UserID, now: UInt64) -> GHEvent? {
        var e = GHEvent()
        if let m = item.message, m.serverID == 0 {
            guard canSeeDirect(m, user) else { return nil }
            e.message = directMessage(m, for: user)
            return e
        }
        if let m = item.message {
            guard home.directory.role(of: user, in: m.serverID) != nil else { return nil }
            e.message = home.groupReceipts.withReceipts([GHChannelMessage(m)], for: user)[0]
            return e
        }
        guard let stored = try? GHEvent(serializedBytes: item.event), stored.body != nil else { return nil }
        e.body = stored.body
        if case .unreadChanged(let old)? = stored.body {
            // A read position moved on another device: send the channel's unread info as it is now.
            guard let c = try? home.directory.readableChannel(old.channelID, by: user) else { return nil }
            e.unreadChanged = home.info(home.unread(user, c, now: now))
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

    /// Writes moved cursors (with the position timer).
    func flushCursors() {
        guard !cursorOwed.isEmpty else { return }
        let writes = cursorOwed.compactMap { registry.all[$0] }.compactMap { cursorWrite(of: $0) }
        cursorOwed.removeAll()
        if !writes.isEmpty { commit(writes, from: nil) { _ in } }
    }
}
