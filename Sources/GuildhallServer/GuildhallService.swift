// The running server: the home loop, which owns every piece of live state
// (the directory, the interest index, the sessions' home sides), the
// store's threads beside it, its own gateway (Gateway.swift), and with
// `loops` > 1 the other loops' gateways (GatewayLoop.swift), reached only by
// messages. Built, run and torn down on one thread (DESIGN §1). It is the
// home of every guild and user; the gateways hold the connections.
//
// Lifecycle: init opens the store, loads the snapshot and binds the
// listener; `run()` turns the loop until shutdown. Shutdown (SIGTERM, SIGINT
// or `ServiceHandle.stop()`) stops accepting and reading, lets pending
// commits finish and answer, tells every session why it closes, flushes,
// stops the store threads and closes every handle.

import Foundation
import GuildhallCore
import GuildhallLoop
import GuildhallStore
import GuildhallWire

/// Values that reach the loop from other threads.
enum LoopMessage: Sendable {
    case committed([WriteOutcome])
    case read([ReadResult])
    case shutdown
    /// New settings (SIGHUP or the handle); only live ones apply. The group,
    /// if any, is left once they have, on every loop.
    case settings(Settings, DispatchGroup?)
    /// What a gateway on another loop told the home this turn.
    case fromGateway(Int, [HomeCommand])
    /// A gateway on another loop closed its sessions at shutdown.
    case gatewayClosed(Int)
    /// A connection for the home loop's own gateway (a resume that arrived on another loop).
    case handOff(HandOff)
}

final class GuildhallService {
    var settings: Settings
    let log: ServerLog
    let secret: [UInt8]
    let clock: @Sendable () -> UInt64
    let loop = EventLoop()
    let store: Store
    let inbox = LoopInbox<LoopMessage>()
    var receiver: InboxReceiver<LoopMessage>!
    var signals: [SignalWatcher] = []
    /// The loop's sessions and connections.
    private(set) var gateway: Gateway!

    var directory = Directory()
    var ids: UIDGenerator
    /// The sessions and the interest index of who is online; shared with the
    /// gateway, and stored here too: fan-out reads it once per recipient, and
    /// reaching it through the gateway cost a retain and release each time.
    let registry = SessionRegistry()
    var recentSends = RecentSends()
    var book = SubscriptionBook()
    var positions = ReadPositions()
    /// Typing in the loop's channels.
    private(set) var typing: ChannelTyping!
    /// Subscribe requests and auto-subscribe mode.
    private(set) var subscriptions: Subscriptions!
    /// Requests on servers, members, channels, guests and bans.
    private(set) var directoryRequests: DirectoryRequests!
    /// Mark-read, unread queries and events, moved read positions.
    private(set) var reading: Reading!
    var deliveryMarks: UInt64 = 0
    /// Commits, reads, the inbox and the live copies of addressed items.
    var runner: EffectRunner!
    /// Group read receipts of the loop's channels.
    private(set) var groupReceipts: GroupReceipts!
    /// Per-user state: direct conversations, received status, offline sync and cursors.
    private(set) var userHome: UserHome!
    var positionTimer: LoopTimer!
    var typingTimer: LoopTimer!
    /// What gateways tell the home, and sessions' lives (Reception.swift).
    private(set) var reception: Reception!
    /// Publishers not read while the fan-out drains (PublisherPause.swift).
    private(set) var publishers: PublisherPause!
    /// The other loops (LoopLinks.swift).
    let links = LoopLinks()

    /// The port the listener bound.
    var port: Int { gateway.port }

    init(settings: Settings, secret: [UInt8], clock: @escaping @Sendable () -> UInt64) throws {
        // libuv writes with writev, which raises SIGPIPE on a connection the
        // peer already reset; that must cost the one connection, not the process
        // (also when the server runs inside another program, as in the tests).
        signal(SIGPIPE, SIG_IGN)
        self.settings = settings
        self.log = ServerLog(level: settings.logLevel)
        self.secret = secret
        self.clock = clock
        self.ids = UIDGenerator(node: UInt64(settings.nodeID))
        let inbox = self.inbox
        store = try Store(StoreOptions(folder: settings.data, synchronous: settings.synchronous, maxBatch: settings.writeBatch,
                                       checkpointMillis: settings.checkpointIntervalMs),
                          onCommitted: { inbox.post(.committed($0)) },
                          onRead: { inbox.post(.read($0)) })
        let windowStart = clock() - UInt64(settings.dedupWindowSeconds) * 1000
        let mentionStart = clock() - UInt64(settings.mentionWindowSeconds) * 1000
        let snapshot: StoreSnapshot
        do {
            snapshot = try store.loadSnapshot(clientIDFloorUID: UIDGenerator.floor(atMillis: windowStart),
                                              mentionFloorUID: UIDGenerator.floor(atMillis: mentionStart))
        } catch {
            store.close()
            throw error
        }
        directory.load(servers: snapshot.servers, members: snapshot.members, invites: snapshot.invites, channels: snapshot.channels,
                       bans: snapshot.bans)
        for (user, channel, p) in snapshot.readPositions { positions.load(user, channel, p) }
        for (user, channel, seq, time) in snapshot.recentMentions { positions.addMention(user, channel, seq: seq, time: time) }
        typing = ChannelTyping(home: self, settings: settings)
        ids.resume(after: snapshot.highestID)
        reception = Reception(home: self)
        publishers = PublisherPause(home: self)
        gateway = Gateway(index: 0, loop: loop, settings: settings, log: log, secret: secret, clock: clock, home: reception)
        runner = EffectRunner(store: store, registry: registry, log: log, clock: clock, settings: settings,
                              highestInboxOrd: snapshot.highestInboxOrd)
        groupReceipts = GroupReceipts(home: self)
        for (channel, r) in snapshot.receiptRequests where directory.channel(channel) != nil { groupReceipts.receipts.addRequest(r, in: channel) }
        for (channel, a) in snapshot.receiptAdvances where directory.channel(channel) != nil { groupReceipts.receipts.load(a, in: channel) }
        userHome = UserHome(home: self)
        subscriptions = Subscriptions(home: self)
        directoryRequests = DirectoryRequests(home: self)
        reading = Reading(home: self)
        for c in snapshot.conversations { userHome.directs.add(c) }
        store.writer.submit(WriteJob(ticket: 0, writes: [.pruneInbox(before: clock() - UInt64(settings.offlineRetentionDays) * 86_400_000)]))
        for m in snapshot.recentClientSends { recentSends.remember(sender: m.sender, clientID: m.clientID, uid: m.uid) }

        runner.resumeReading = { s in s.resumeReading(.storage) }
        runner.onSettled = { [unowned self] in if self.gateway.shuttingDown && self.runner.pendingCommits == 0 { self.finishShutdown() } }
        receiver = InboxReceiver(loop: loop, inbox: inbox) { [unowned self] in self.received($0) }
        positionTimer = LoopTimer(loop: loop)
        let flushEvery = UInt64(settings.positionFlushMs)
        positionTimer.start(afterMillis: flushEvery, repeatMillis: flushEvery) { [unowned self] in self.reading.flushPositions() }
        typingTimer = LoopTimer(loop: loop)
        let typingEvery = UInt64(max(20, min(250, settings.typingFrameIntervalMs / 4)))
        typingTimer.start(afterMillis: typingEvery, repeatMillis: typingEvery) { [unowned self] in self.typing.retryTyping() }
        do {
            try gateway.listen(sharing: settings.loops > 1)
            try links.start(settings, beside: gateway, secret: secret, clock: clock, homeInbox: inbox)
        } catch {
            links.stop()
            teardownHandles()
            store.close()
            loop.close()
            throw error
        }
        log.info("loaded", ["servers": directory.serverCount, "channels": directory.channelCount, "data": settings.data])
    }

    /// Watches SIGTERM and SIGINT (graceful shutdown); for `guildhall serve`.
    func watchSignals() {
        for sig in [SIGTERM, SIGINT] {
            signals.append(SignalWatcher(loop: loop, signal: sig) { [unowned self] signum in
                self.log.info("signal received, shutting down", ["signal": signum])
                self.beginShutdown()
            })
        }
    }

    /// Turns the loop until shutdown completes, then waits for the other
    /// loops; returns uv_loop_close's result, the home loop's or another's
    /// (0 when no loop leaked a handle).
    func run() -> Int32 {
        loop.run()
        let others = links.join()
        let rc = loop.close()
        return rc != 0 ? rc : others
    }

    /// Posts a shutdown from any thread.
    var shutdownTrigger: @Sendable () -> Void {
        let inbox = self.inbox
        return { inbox.post(.shutdown) }
    }

    func now() -> UInt64 { clock() }

    // MARK: Cross-thread messages

    private func received(_ messages: [LoopMessage]) {
        for message in messages {
            switch message {
            case .committed(let outcomes):
                runner.settle(outcomes)
            case .read(let results):
                runner.readsArrived(results)
            case .shutdown:
                beginShutdown()
            case .settings(let newer, let applied):
                applyLive(newer, applied)
            case .fromGateway(let index, let commands):
                if !finished { reception.carryOut(commands, from: index) }
            case .gatewayClosed:
                if links.closed() { finishLocally() }
            case .handOff(let h):
                gateway.adopt(h)
            }
        }
    }

    // MARK: Storage

    /// Commits `writes`; `then` runs on the loop after the commit returned.
    func commit(_ writes: [StoreWrite], from session: HomeSession?, then: @escaping (StoreError?) -> Void) {
        runner.commit(writes, from: session, then: then)
    }

    func read(_ request: ReadRequest, then: @escaping (ReadResult) -> Void) { runner.read(request, then: then) }

    func submitTurnJobs() { runner.submitTurnJobs() }

    // MARK: Sessions and turns

    /// The gateway side of session `key`: the session itself on the home's
    /// own loop, else a port that sends commands to its loop.
    func port(for key: UInt64) -> (any SessionPort)? {
        key & 0xff == 0 ? gateway.sessions[key] : links.port(for: key)
    }

    /// The home loop's turn ends (before its gateway flushes): the turn's
    /// commits, coalesced receipt answers.
    func turnEnding() {
        runner.submitTurnJobs(inline: true)
        groupReceipts.sendOwedResponses()
    }

    // MARK: Shutdown

    func beginShutdown() {
        guard !gateway.shuttingDown else { return }
        gateway.stopAccepting()
        links.broadcast(.stopAccepting)
        runner.resumesReaders = false
        log.info("shutting down", ["sessions": registry.count, "pending_commits": runner.pendingCommits])
        if runner.pendingCommits == 0 {
            finishShutdown()
        } else {
            // Commits normally finish in milliseconds; the grace period only
            // bounds a stuck disk.
            let deadline = LoopTimer(loop: loop)
            commitDeadline = deadline
            deadline.start(afterMillis: UInt64(settings.shutdownGraceMs), repeatMillis: 0) { [unowned self] in
                self.log.warn("commits still pending at the shutdown deadline; closing without them", ["pending": self.runner.pendingCommits])
                self.finishShutdown()
            }
        }
    }

    var finished = false
    /// The other loops are closing their sessions (shutdown).
    private var closingLoops = false
    /// Bounds the wait for pending commits at shutdown; closed when they are done.
    var commitDeadline: LoopTimer?

    /// Closes every loop's sessions: the other loops' first (their ends, and
    /// the cursors they save, reach the home before it stops), then its own.
    private func finishShutdown() {
        guard !finished, !closingLoops else { return }
        commitDeadline?.close()
        commitDeadline = nil
        closingLoops = true
        guard links.closeAll() else { finishLocally(); return }
        let deadline = LoopTimer(loop: loop)
        commitDeadline = deadline
        deadline.start(afterMillis: UInt64(max(100, settings.shutdownGraceMs)), repeatMillis: 0) { [unowned self] in
            self.log.warn("loops still closing their sessions at the shutdown deadline")
            self.finishLocally()
        }
    }

    private func finishLocally() {
        guard !finished else { return }
        finished = true
        commitDeadline?.close()
        commitDeadline = nil
        reading.flushPositions()
        gateway.closeAll()
        store.close()
        receiver.deliver()
        teardownHandles()
        log.info("shutdown complete")
    }

    private func teardownHandles() {
        receiver?.close()
        gateway?.closeHandles()
        positionTimer?.close()
        typingTimer?.close()
        for s in signals { s.close() }
        signals.removeAll()
    }
}

extension GuildhallService {
    /// Applies the live settings of `newer` here and sends them to the other
    /// loops; the others wait for a restart. `group` (entered once by the
    /// caller) is left when every loop has applied them.
    func applyLive(_ newer: Settings, _ group: DispatchGroup? = nil) {
        let (applied, restart) = settings.applyingLive(newer)
        if !restart.isEmpty { log.warn("settings changed that need a restart; ignored until then", ["keys": restart.joined(separator: ",")]) }
        settings = applied
        gateway.settings = applied
        links.apply(applied, group)
        runner.storeQueueMax = settings.storeQueueMax
        runner.inlineCommitMax = settings.inlineCommitMax
        typing.board.throttleMs = UInt64(settings.typingThrottleMs)
        typing.board.expiryMs = UInt64(settings.typingExpiryMs)
        log.info("live settings applied", ["small_server_threshold": settings.smallServerThreshold])
        group?.leave()
    }

    /// Posts new settings from any thread and waits until every loop has applied them.
    var settingsTrigger: @Sendable (Settings) -> Void {
        let inbox = self.inbox
        return { settings in
            let applied = DispatchGroup()
            applied.enter()
            if inbox.post(.settings(settings, applied)) { applied.wait() }
        }
    }
}
