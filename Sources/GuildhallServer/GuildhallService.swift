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
    /// New settings (SIGHUP or the handle); only live ones apply. The
    /// semaphore, if any, is signalled once they have.
    case settings(Settings, DispatchSemaphore?)
    /// What a gateway on another loop told the home this turn.
    case fromGateway(Int, [HomeCommand])
    /// A gateway on another loop closed its sessions at shutdown.
    case gatewayClosed(Int)
    /// A connection for the home loop's own gateway (a resume that arrived on another loop).
    case handOff(HandOff)
}

final class GuildhallService: GatewayHome {
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
    /// Sessions the home ended whose gateways have not yet confirmed (Admission.swift).
    var ending: [UInt64: EndingSession] = [:]
    /// Logins whose offline sync waits for such a confirmation.
    var syncsWaiting: [HomeSession] = []
    /// Sessions owed coalesced unread or typing notices, sent at the end of the turn.
    let owing = OwingList()
    /// Publishers not read while the outbound bytes drain (PublisherPause.swift).
    var pausedPublishers: [HomeSession] = []
    /// Bytes the fan-out of sends waiting for their commit will queue (PublisherPause.swift).
    var pendingFanOutBytes = 0
    /// Per other loop, as it last reported: bytes queued on its sessions, and bytes of events it had applied.
    var outboundByLoop: [Int]
    var appliedByLoop: [Int]
    /// The other loops' gateways: their threads, and their outboxes by gateway index (none for 0, the home's own).
    private var gatewayThreads: [GatewayThread] = []
    private(set) var outboxes: [GatewayOutbox?] = [nil]
    /// Other loops' gateways that have not yet closed their sessions at shutdown.
    private var gatewaysOpen = 0

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
        outboundByLoop = Array(repeating: 0, count: settings.loops)
        appliedByLoop = outboundByLoop
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
        gateway = Gateway(index: 0, loop: loop, settings: settings, log: log, secret: secret, clock: clock, home: self)
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
            try startGatewayLoops()
        } catch {
            stopGatewayLoops()
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
    /// loops; returns uv_loop_close's result (0 when nothing leaked).
    func run() -> Int32 {
        loop.run()
        for t in gatewayThreads { t.join() }
        return loop.close()
    }

    /// Starts a gateway on a loop of its own for each loop past the first, on the first one's port.
    private func startGatewayLoops() throws {
        guard settings.loops > 1 else { return }
        let inboxes = (0..<settings.loops).map { _ in LoopInbox<GatewayMessage>() }
        let homeInbox = inbox
        let peers: [@Sendable (HandOff) -> Void] = (0..<settings.loops).map { i in
            if i == 0 { return { _ = homeInbox.post(.handOff($0)) } }
            let target = inboxes[i]
            return { _ = target.post(.handOff($0)) }
        }
        gateway.peers = peers
        for i in 1..<settings.loops {
            gatewayThreads.append(try GatewayLoop.start(index: i, settings: settings, port: gateway.port, secret: secret, clock: clock,
                                                        inbox: inboxes[i], homeInbox: homeInbox, peers: peers))
            outboxes.append(GatewayOutbox(inbox: inboxes[i]))
        }
    }

    /// Stops the other loops' gateways (a start that failed).
    private func stopGatewayLoops() {
        for o in outboxes { o?.post(.closeAll) }
        for t in gatewayThreads { t.join() }
        gatewayThreads.removeAll()
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
                applyLive(newer)
                applied?.signal()
            case .fromGateway(let index, let commands):
                if !finished { carryOut(commands, from: index) }
            case .gatewayClosed:
                gatewaysOpen -= 1
                if gatewaysOpen == 0 { finishLocally() }
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

    // MARK: What gateways tell the home (GatewayHome)

    /// The gateway side of session `key`: the session itself on the home's
    /// own loop, else a port that sends commands to its loop (the key's low byte).
    func port(for key: UInt64) -> (any SessionPort)? {
        let index = Int(key & 0xff)
        if index == 0 { return gateway.sessions[key] }
        guard index < outboxes.count, let outbox = outboxes[index] else { return nil }
        return RemoteSession(key: key, outbox: outbox)
    }

    /// The home loop's gateway flushed: what this turn has for the other loops goes to them.
    func turnEnded(_ gateway: Gateway) {
        for o in outboxes { o?.post() }
    }

    func turnEnding() {
        // First: the bytes the last turn queued are counted by now, the ones this turn will queue not yet.
        resumePublishersIfDrained()
        runner.submitTurnJobs(inline: true)
        groupReceipts.sendOwedResponses()
        sendOwedNotices()
    }

    /// Coalesced unread and typing notices; a session behind on its writes
    /// gets no typing, and its unread notices wait until it catches up.
    private func sendOwedNotices() {
        let sessions = owing.sessions
        owing.sessions.removeAll(keepingCapacity: true)
        for s in sessions {
            s.isOwing = false
            guard s.isLoggedIn else { continue }
            if s.isBehind {
                if !s.pendingTyping.isEmpty { typing.forget(s) }
            } else {
                reading.emitUnread(s)
                typing.emitTyping(s)
            }
        }
    }

    func acknowledged(session key: UInt64, ackedOrd: UInt64, packageAcked: Bool) {
        guard let s = registry.all[key] else { return }
        userHome.acknowledged(s, ackedOrd: ackedOrd, packageAcked: packageAcked)
    }

    func sessionDetached(_ key: UInt64, since: UInt64) {
        guard let s = registry.all[key] else { return }
        s.detachedSince = since
        typing.forget(s)
    }

    func sessionResumed(_ key: UInt64) {
        guard let s = registry.all[key] else { return }
        s.detachedSince = nil
        s.isBehind = false
        if !s.pendingTyping.isEmpty || !s.pendingUnread.isEmpty { s.markOwing() }
    }

    func sessionBehind(_ key: UInt64, _ behind: Bool) {
        guard let s = registry.all[key] else { return }
        s.isBehind = behind
        if !behind && !s.pendingUnread.isEmpty { s.markOwing() }
    }

    // MARK: Shutdown

    func beginShutdown() {
        guard !gateway.shuttingDown else { return }
        gateway.stopAccepting()
        for o in outboxes { o?.post(.stopAccepting) }
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
    /// Bounds the wait for pending commits at shutdown; closed when they are done.
    var commitDeadline: LoopTimer?

    /// Closes every loop's sessions: the other loops' first (their ends, and
    /// the cursors they save, reach the home before it stops), then its own.
    private func finishShutdown() {
        guard !finished, gatewaysOpen == 0 else { return }
        commitDeadline?.close()
        commitDeadline = nil
        gatewaysOpen = gatewayThreads.count
        guard gatewaysOpen > 0 else { finishLocally(); return }
        for o in outboxes { o?.post(.closeAll) }
        let deadline = LoopTimer(loop: loop)
        commitDeadline = deadline
        deadline.start(afterMillis: UInt64(max(100, settings.shutdownGraceMs)), repeatMillis: 0) { [unowned self] in
            self.log.warn("loops still closing their sessions at the shutdown deadline", ["loops": self.gatewaysOpen])
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
    /// Applies the live settings of `newer`; the others wait for a restart.
    func applyLive(_ newer: Settings) {
        let (applied, restart) = settings.applyingLive(newer)
        if !restart.isEmpty { log.warn("settings changed that need a restart; ignored until then", ["keys": restart.joined(separator: ",")]) }
        settings = applied
        gateway.settings = applied
        for o in outboxes { o?.post(.settings(applied)) }
        runner.storeQueueMax = settings.storeQueueMax
        runner.inlineCommitMax = settings.inlineCommitMax
        typing.board.throttleMs = UInt64(settings.typingThrottleMs)
        typing.board.expiryMs = UInt64(settings.typingExpiryMs)
        log.info("live settings applied", ["small_server_threshold": settings.smallServerThreshold])
    }

    /// Posts new settings from any thread and waits until they apply.
    var settingsTrigger: @Sendable (Settings) -> Void {
        let inbox = self.inbox
        return { settings in
            let applied = DispatchSemaphore(value: 0)
            if inbox.post(.settings(settings, applied)) { applied.wait() }
        }
    }
}
