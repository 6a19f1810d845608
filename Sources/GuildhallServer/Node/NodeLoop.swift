// One loop of the node (docs/architecture.md): an event loop on a thread of its
// own (the first on the thread that runs the node), its inbox, its gateway
// (the sessions it accepted, on its own SO_REUSEPORT listener) and its home
// (the guilds and users placed on it). Everything from other threads comes
// through the inbox, and this file says where each message goes. Shutdown
// steps are in NodeShutdown.swift. Built, run and torn down on its thread.

import Dispatch
import Foundation
import GuildhallCore
import GuildhallLoop
import GuildhallStore

final class NodeLoop {
    let index: Int
    let loop = EventLoop()
    let log: ServerLog
    let links: LoopLinks
    private(set) var gateway: Gateway!
    private(set) var home: Home!
    /// How the gateway reaches the homes on the other loops (kept alive here).
    private var remoteHomes: [RemoteHome] = []
    private var receiver: InboxReceiver<LoopMessage>!
    /// This loop's part of shutdown (NodeShutdown.swift); the first loop leads it.
    var shutdown = ShutdownState()
    /// Closes the store once every home is done (first loop only).
    var closeStore: (() -> Void)?
    /// Gives the cluster's shard leases back (first loop, in a cluster).
    var stopLeases: (@Sendable () -> Void)?
    /// The operator's HTTP endpoint, on the first loop only.
    var admin: AdminEndpoint?
    /// Signals the process watches (first loop only), closed with the loop's handles.
    var signals: [SignalWatcher] = []

    /// Builds the loop's home from `share` and its gateway, and listens
    /// (on `ports` beside the first loop's listeners, or on the configured
    /// addresses when nil). On failure, closes what it made and throws.
    init(index: Int, settings: Settings, secret: [UInt8], clock: @escaping @Sendable () -> UInt64, store: Store,
         share: StoreSnapshot, placements: [ChannelID: ServerID], inboxes: [LoopInbox<LoopMessage>], ports: LoopPorts?, guards: NodeGuard) throws {
        self.index = index
        log = ServerLog(level: settings.logLevel, format: settings.logFormat)
        links = LoopLinks(index: index, inboxes: inboxes, node: settings.nodeID, bus: guards.bus)
        home = Home(index: index, loop: loop, settings: settings, log: log, clock: clock, store: store, share: share, links: links,
                    metrics: guards.metrics)
        let routes = HomeRoutes(map: home.map, index: index, channels: placements, served: guards.served, cluster: guards.cluster, bus: guards.bus)
        var homes: [any GatewayHome] = []
        for i in inboxes.indices {
            if i == index {
                homes.append(home.reception)
            } else {
                let remote = RemoteHome(index: index, home: i, inbox: inboxes[i])
                remoteHomes.append(remote)
                homes.append(remote)
            }
        }
        routes.connect(homes)
        gateway = Gateway(index: index, loop: loop, settings: settings, log: log, secret: secret, clock: clock, routes: routes,
                          limits: GatewayLimits(settings, node: guards))
        routes.gateway = gateway
        gateway.homeFigures = { [unowned home] in home.book.countsByKind }
        gateway.peers = links.handOffs
        let ownInbox = inboxes[index]
        gateway.tokenChecks = TokenChecks(keys: guards.tokenKeys) { key, outcome in _ = ownInbox.post(.tokenChecked(key, outcome)) }
        gateway.webSocketDoor.files.post = { key, outcome in _ = ownInbox.post(.files(key, outcome)) }
        gateway.webSocketDoor.downloads.post = { key, report in _ = ownInbox.post(.download(key, report)) }
        home.pushNotices.gateway = guards.push
        home.attachments.work = guards.files.map { FileWork(storage: $0) { ticket, outcome in _ = ownInbox.post(.fileWork(ticket, outcome)) } }
        home.attachments.startSweeping(on: loop)
        home.gateway = gateway
        gateway.requests.mintUID = { [unowned home] now in home.ids.next(nowMillis: now) }
        home.runner.onSettled = { [unowned self] in self.commitsSettled() }
        receiver = InboxReceiver(loop: loop, inbox: inboxes[index]) { [unowned self] in self.received($0) }
        do {
            try gateway.listen(port: ports?.client, sharing: settings.loops > 1)
            // Browsers are spread over the loops as TCP clients are (SO_REUSEPORT).
            if ports.map({ $0.webSocket > 0 }) ?? true { try gateway.webSocketDoor.listen(port: ports?.webSocket, sharing: settings.loops > 1) }
            // Links to files name the port bound when the setting asked for any.
            gateway.settings.webSocketBoundPort = gateway.webSocketDoor.port
            home.services.settings.webSocketBoundPort = gateway.webSocketDoor.port
        } catch {
            closeHandles()
            _ = loop.close()
            throw error
        }
    }

    /// The port the gateway's listener bound.
    var port: Int { gateway.port }

    private func received(_ messages: [LoopMessage]) {
        for message in messages {
            switch message {
            case .committed(let outcomes):
                // Outcomes arrive together as their transaction committed: one batch.
                home.metrics.commitBatch.record(Double(outcomes.count))
                for o in outcomes { home.metrics.commitLatency.record(Double(o.latencyMicros) / 1_000_000) }
                home.runner.settle(outcomes)
            case .read(let results): home.runner.readsArrived(results)
            case .settings(let newer, let group):
                applyLive(newer)
                group?.leave()
            case .fromGateway(let from, let commands):
                if !shutdown.homeClosed {
                    home.reception.carryOut(commands, from: from)
                } else {
                    home.reception.refuseAll(commands)
                }
            case .fromHome(let from, let steps): gateway.carryOut(steps, from: from)
            case .mail(let from, let mail): if !shutdown.homeClosed { home.received(mail, from: from) }
            case .handOff(let h): gateway.adopt(h)
            case .tokenChecked(let key, let outcome): gateway.tokenChecks?.checked(key, outcome)
            case .files(let key, let outcome): gateway.webSocketDoor.files.arrived(key, outcome)
            case .download(let key, let report): gateway.webSocketDoor.downloads.arrived(key, report)
            case .fileWork(let ticket, let outcome): if !shutdown.homeClosed { home.attachments.done(ticket, outcome) }
            case .adoptShards(let share, let loaded):
                if !shutdown.homeClosed { home.adopt(share) }
                loaded.leave()
            case .dropShards(let shards):
                if !shutdown.homeClosed {
                    home.drop(shards: shards)
                    home.presences.gaveUp(shards: shards)
                }
                gateway.closeSessions(ofShards: shards)
            case .homesMoved(let shards): gateway.closeSessions(ofShards: shards)
            case .guildsMoved(let shards):
                gateway.requests.orphanSends(ofShards: shards) { gateway.sessions[$0] }
                gateway.requests.carrySubscriptions(ofShards: shards, of: gateway.sessions.values)
            case .shutdown: beginShutdown()
            case .adminAnswer(let id, let answer): admin?.answer(id, answer)
            case .stopAccepting: stopAccepting()
            case .quiet: loopQuiet()
            case .closeSessions(let draining): closeSessions(draining: draining)
            case .gatewayClosed: gatewayClosed()
            case .homeClosed: homeClosed()
            case .stop:
                stop()
                return
            }
        }
        afterMessages()
    }

    /// Applies the live settings of `newer` on this loop (the first loop says which wait for a restart).
    func applyLive(_ newer: Settings) {
        if index == 0 {
            let restart = home.settings.applyingLive(newer).restartNeeded
            if !restart.isEmpty { log.warn("settings changed that need a restart; ignored until then", ["keys": restart.joined(separator: ",")]) }
            // The token keys' file is read again (a rotation changes the file, not the setting).
            do throws(SettingsError) { try gateway.limits.node.tokenKeys.load(newer) } catch {
                log.error("token keys not reloaded; the ones in use stay", ["error": error.description])
            }
            do throws(SettingsError) { try gateway.limits.node.certificates.load(newer) } catch {
                log.error("TLS certificate not reloaded; the one in use stays", ["error": error.description])
            }
        }
        home.applyLive(newer)
        gateway.settings = home.settings
        gateway.limits.update(home.settings)
        if index == 0 { log.info("live settings applied", ["small_server_threshold": home.settings.smallServerThreshold]) }
    }

    /// Closes the loop's handles; its `run` returns once libuv has released them.
    func closeHandles() {
        admin?.close()
        admin = nil
        receiver?.close()
        gateway?.closeHandles()
        home?.closeHandles()
        shutdown.deadline?.close()
        shutdown.deadline = nil
        for s in signals { s.close() }
        signals.removeAll()
    }
}

/// The ports the first loop bound, which the other loops bind beside it (SO_REUSEPORT); 0: no such listener.
struct LoopPorts: Sendable {
    let client: Int
    let webSocket: Int
}
