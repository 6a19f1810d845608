// The running server process (docs/architecture.md): the store and its threads,
// and `loops` NodeLoops, each with its gateway and its home. The first loop
// runs on the thread that calls `run()`; the others on threads of their
// own. The node reads the store's snapshot once and gives each loop its
// share; the store's threads hand each outcome to the loop that asked (a
// ticket's low byte). Built and run on one thread; reached from others only
// through the triggers, which post to the loops' inboxes.

import Dispatch
import Foundation
import GuildhallCore
import GuildhallLoop
import GuildhallFiles
import GuildhallStore

final class Node {
    let settings: Settings
    let store: Store
    let inboxes: [LoopInbox<LoopMessage>]
    /// What the gateways share (RequestLimits.swift), and the admin endpoint reads.
    let guards: NodeGuard
    /// Shard leases when the node is part of a cluster (`cluster` set).
    private(set) var leases: ShardLeases?
    /// The shards' logs, and the other nodes, when the node is part of a cluster.
    private(set) var shardLog: ShardLog?
    private(set) var bus: NodeBus?
    /// The first loop, run on the calling thread.
    let first: NodeLoop
    private var threads: [LoopThread] = []

    init(settings: Settings, secret: [UInt8], clock: @escaping @Sendable () -> UInt64) throws {
        // libuv writes with writev, which raises SIGPIPE on a connection the
        // peer already reset; that must cost the one connection, not the process
        // (also when the server runs inside another program, as in the tests).
        signal(SIGPIPE, SIG_IGN)
        self.settings = settings
        // First: a cluster whose nodes could not reach the same files is refused before anything opens.
        let files = try FileStorage.open(settings)
        if !settings.pushGatewayURL.isEmpty && settings.pushSecret.isEmpty {
            throw SettingsError(description: "push-gateway-url needs push-secret (or push-secret-file): the gateway checks each post's signature")
        }
        let inboxes = (0..<settings.loops).map { _ in LoopInbox<LoopMessage>() }
        self.inboxes = inboxes
        var options = StoreOptions(folder: settings.data, synchronous: settings.synchronous, maxBatch: settings.writeBatch,
                                   checkpointMillis: settings.checkpointIntervalMs)
        options.searchIndex = settings.searchIndex == "on"
        options.journalCodec = LogEntries.journalCodec
        options.journalAhead = settings.cluster.isEmpty && settings.loopCommitMax > 0 && settings.commitJournal == "on"
        store = try Store(options,
                          onCommitted: { Node.deliver($0, to: inboxes, ticket: \.ticket) { .committed($0) } },
                          onRead: { Node.deliver($0, to: inboxes, ticket: \.ticket) { .read($0) } })
        let replayLog = ServerLog(level: settings.logLevel, format: settings.logFormat)
        if store.journalReplay.stored > 0 { replayLog.info("journal replayed", ["records": store.journalReplay.stored]) }
        for e in store.journalReplay.refused { replayLog.error("journal record refused", ["error": e.description]) }
        let metrics = NodeMetrics(loops: settings.loops, clustered: !settings.cluster.isEmpty)
        let served = ServedShards(settings: settings)
        let cluster = ClusterView(settings: settings)
        var takeover: ShardTakeover?
        var bus: NodeBus?
        var snapshot: StoreSnapshot
        do {
            if !settings.cluster.isEmpty {
                // The first lease round claims this node's share, catches it up from its logs and fences it, before the homes load it.
                let leases = try ShardLeases(settings: settings, log: ServerLog(level: settings.logLevel, format: settings.logFormat),
                                             view: cluster)
                self.leases = leases
                let shardLog = try ShardLog(settings: settings, store: store, log: ServerLog(level: settings.logLevel, format: settings.logFormat),
                                            metrics: metrics.cluster, leases: { leases.owns($0) })
                self.shardLog = shardLog
                store.writer.useJournal(shardLog)
                let t = ShardTakeover(shardLog: shardLog, store: store, settings: settings, served: served, clock: clock)
                takeover = t
                bus = try NodeBus(settings: settings, inboxes: inboxes, log: ServerLog(level: settings.logLevel, format: settings.logFormat))
                self.bus = bus
                leases.firstRound(t)
            }
            snapshot = try Node.snapshot(of: store, settings: settings, clock: clock)
            if let shardLog = self.shardLog {
                snapshot = snapshot.only(shards: served.all, of: settings.shards)
                snapshot.generations = shardLog.currentGenerations
            }
        } catch {
            leases?.stop()
            store.close()
            shardLog?.close()
            throw error
        }
        let shares = snapshot.shares(HomeMap(settings))
        let push = settings.pushGatewayURL.isEmpty ? nil
            : PushGateway(settings: settings, clock: clock, metrics: metrics, log: ServerLog(level: settings.logLevel, format: settings.logFormat))
        let guards = NodeGuard(loops: settings.loops, metrics: metrics, served: served, cluster: cluster, bus: bus, files: files, push: push)
        self.guards = guards
        do {
            try guards.tokenKeys.load(settings)
            try guards.certificates.load(settings)
        } catch {
            leases?.stop()
            store.close()
            shardLog?.close()
            throw error
        }
        var placements: [ChannelID: ServerID] = [:]
        if settings.loops > 1 { for c in snapshot.channels { placements[c.id] = c.serverID } }
        do {
            first = try NodeLoop(index: 0, settings: settings, secret: secret, clock: clock, store: store, share: shares[0],
                                 placements: placements, inboxes: inboxes, ports: nil, guards: guards)
        } catch {
            leases?.stop()
            store.close()
            shardLog?.close()
            throw error
        }
        let store = self.store
        let shardLog = self.shardLog
        // The log closes after the store: the writer's last jobs still go through it.
        let busyStatements = self.busyStatements, log = first.log
        first.closeStore = {
            let busy = store.close()
            if busy > 0 {
                log.error("statements left busy at shutdown (a leak that holds a transaction open)", ["count": busy])
                busyStatements.record(busy)
            }
            shardLog?.close()
        }
        do {
            for i in 1..<max(1, settings.loops) {
                threads.append(try LoopThread.start(index: i, settings: settings, secret: secret, clock: clock, store: store,
                                                    share: shares[i], placements: placements, inboxes: inboxes,
                                                    ports: LoopPorts(client: first.port, webSocket: first.gateway.webSocketDoor.port),
                                                    guards: guards))
            }
        } catch {
            for i in threads.indices { _ = inboxes[i + 1].post(.stop) }
            for t in threads { _ = t.join() }
            first.closeHandles()
            first.loop.run()
            _ = first.loop.close()
            leases?.stop()
            store.close()
            shardLog?.close()
            throw error
        }
        do {
            if let leases, let takeover {
                first.stopLeases = { leases.stop() }
                takeover.homesRunning(inboxes)
                leases.startRounds(takeover)
            }
            try startAdmin()
        } catch {
            leases?.stop()
            for i in threads.indices { _ = inboxes[i + 1].post(.stop) }
            for t in threads { _ = t.join() }
            threads.removeAll()
            first.closeHandles()
            first.loop.run()
            _ = first.loop.close()
            store.close()
            shardLog?.close()
            throw error
        }
        store.writer.submit(WriteJob(ticket: 0, writes: [.pruneInbox(before: clock() - UInt64(settings.offlineRetentionDays) * 86_400_000)]))
        first.log.info("loaded", ["servers": snapshot.servers.count, "channels": snapshot.channels.count, "loops": settings.loops,
                                  "data": settings.data])
    }

    /// The store's snapshot as the homes load it: sends with client ids and mentions within their windows.
    static func snapshot(of store: Store, settings: Settings, clock: @Sendable () -> UInt64) throws -> StoreSnapshot {
        let windowStart = clock() - UInt64(settings.dedupWindowSeconds) * 1000
        let mentionStart = clock() - UInt64(settings.mentionWindowSeconds) * 1000
        return try store.loadSnapshot(clientIDFloorUID: UIDGenerator.floor(atMillis: windowStart),
                                      mentionFloorUID: UIDGenerator.floor(atMillis: mentionStart))
    }

    /// Hands each outcome to the loop whose ticket it carries.
    private static func deliver<T>(_ items: [T], to inboxes: [LoopInbox<LoopMessage>], ticket: KeyPath<T, UInt64>,
                                   as message: ([T]) -> LoopMessage) {
        if inboxes.count == 1 { _ = inboxes[0].post(message(items)); return }
        var byLoop = Array(repeating: [T](), count: inboxes.count)
        for item in items { byLoop[Int(item[keyPath: ticket] & 0xff) % inboxes.count].append(item) }
        for (i, part) in byLoop.enumerated() where !part.isEmpty { _ = inboxes[i].post(message(part)) }
    }

    /// The port the listeners bound.
    var port: Int { first.port }

    /// The WebSocket listener's port, 0 without one.
    var webSocketPort: Int { first.gateway.webSocketDoor.port }

    /// The admin endpoint's port, 0 without one.
    var adminPort: Int { first.admin?.port ?? 0 }

    /// Listens on `admin-listen`, refusing an address others can reach without a token.
    private func startAdmin() throws {
        guard !settings.adminListen.isEmpty else { return }
        guard let (host, port) = SocketAddress.split(settings.adminListen) else {
            throw SettingsError(description: "admin-listen must be HOST:PORT, not \(settings.adminListen)")
        }
        let loopback = host == "localhost" || host == "::1" || host.hasPrefix("127.")
        guard loopback || !settings.adminToken.isEmpty else {
            throw SettingsError(description: "admin-listen \(settings.adminListen) is reachable from other hosts: set admin-token, or listen on 127.0.0.1")
        }
        first.admin = try AdminEndpoint(node: self, host: host, port: port)
    }

    /// Watches SIGTERM and SIGINT (graceful shutdown), and SIGHUP (`reload`
    /// re-reads the configuration; its live settings apply on every loop); for `guildhall serve`.
    func watchSignals(reload: @escaping () throws -> Settings) {
        for sig in [SIGTERM, SIGINT] {
            first.signals.append(SignalWatcher(loop: first.loop, signal: sig) { [unowned self] signum in
                self.first.log.info("signal received, shutting down", ["signal": signum])
                self.first.beginShutdown()
            })
        }
        first.signals.append(SignalWatcher(loop: first.loop, signal: SIGHUP) { [unowned self] _ in
            do {
                let newer = try reload()
                for inbox in self.inboxes { _ = inbox.post(.settings(newer, nil)) }
            } catch {
                self.first.log.error("configuration not reloaded", ["error": String(describing: error)])
            }
        })
    }

    /// Turns the first loop until shutdown completes, then waits for the
    /// others; returns uv_loop_close's result, the first loop's or another's
    /// (0 when no loop leaked a handle), or 3 when the store closed with
    /// statements still busy.
    func run() -> Int32 {
        first.loop.run()
        var rc: Int32 = 0
        for t in threads {
            let r = t.join()
            if rc == 0 { rc = r }
        }
        threads.removeAll()
        let own = first.loop.close()
        // Every loop has stopped posting to other nodes.
        bus?.close()
        if own == 0 && rc == 0 && busyStatements.value > 0 { return Self.busyStatementsStatus }
        return own != 0 ? own : rc
    }

    /// Statements the store found busy when it closed (docs/reliability.md's leak check: 0).
    private let busyStatements = BusyAtClose()
    /// The exit status when every loop closed cleanly but the store had statements left busy.
    static let busyStatementsStatus: Int32 = 3

    /// Posts a shutdown from any thread.
    var shutdownTrigger: @Sendable () -> Void {
        let inbox = inboxes[0]
        return { inbox.post(.shutdown) }
    }

    /// Posts new settings from any thread and waits until every loop has applied them.
    var settingsTrigger: @Sendable (Settings) -> Void {
        let inboxes = self.inboxes
        return { settings in
            let applied = DispatchGroup()
            for inbox in inboxes {
                applied.enter()
                if !inbox.post(.settings(settings, applied)) { applied.leave() }
            }
            applied.wait()
        }
    }
}

/// A loop past the first, on its thread, to wait for at shutdown.
final class LoopThread: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let closing = Locked<Int32>(0)

    /// Starts loop `index` on a thread of its own, listening on `ports`
    /// beside the first; returns once it listens (or throws why it could not).
    static func start(index: Int, settings: Settings, secret: [UInt8], clock: @escaping @Sendable () -> UInt64, store: Store,
                      share: StoreSnapshot, placements: [ChannelID: ServerID], inboxes: [LoopInbox<LoopMessage>],
                      ports: LoopPorts, guards: NodeGuard) throws -> LoopThread {
        let started = DispatchSemaphore(value: 0)
        let failure = Locked<String?>(nil)
        let running = LoopThread()
        NamedThread.start("gh-loop-\(index)") {
            let node: NodeLoop
            do {
                node = try NodeLoop(index: index, settings: settings, secret: secret, clock: clock, store: store, share: share,
                                    placements: placements, inboxes: inboxes, ports: ports, guards: guards)
            } catch {
                failure.withLock { $0 = String(describing: error) }
                started.signal()
                running.finished(closing: 0)
                return
            }
            started.signal()
            node.loop.run()
            running.finished(closing: node.loop.close())
        }
        started.wait()
        if let failure = failure.withLock({ $0 }) { throw SettingsError(description: failure) }
        return running
    }

    /// The loop ended; `rc`: uv_loop_close's result (0 when no handle leaked).
    private func finished(closing rc: Int32) {
        closing.withLock { $0 = rc }
        done.signal()
    }

    /// Returns once the thread's loop has closed, with uv_loop_close's result.
    func join() -> Int32 {
        done.wait()
        done.signal()
        return closing.withLock { $0 }
    }
}
