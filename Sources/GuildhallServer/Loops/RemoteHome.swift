// The home as a gateway on another loop reaches it: each `GatewayHome` call
// becomes a command, and the commands go to the home's loop once per
// gateway turn, in order, with the bytes the gateway's sessions have queued
// when that changed enough to matter to publisher pauses. Gateway loop only.

import GuildhallCore
import GuildhallLoop
import GuildhallWire

final class RemoteHome: GatewayHome {
    /// The gateway's loop, the home's place, and where its messages go (its loop's inbox, or the node bus).
    private let index: Int
    private let homeIndex: Int
    private let sink: (LoopMessage) -> Void
    private var commands: [HomeCommand] = []
    private var reportedOutbound = 0
    private var reportedApplied = 0

    init(index: Int, home: Int, inbox: LoopInbox<LoopMessage>) {
        self.index = index
        homeIndex = home
        sink = { _ = inbox.post($0) }
    }

    /// A home on another node, through the node bus.
    init(index: Int, home place: Int, bus: NodeBus) {
        self.index = index
        homeIndex = place
        sink = { bus.post($0, to: place) }
    }

    func admit(_ a: Admission) { commands.append(.admit(a)) }
    func sessionOpened(_ o: OpenedSession) { commands.append(.opened(o)) }
    func route(_ body: GHRequest.OneOf_Body, id: UInt64, session key: UInt64, part: Bool) {
        commands.append(.route(body, id: id, key: key, part: part))
    }
    /// One command per send (the home takes consecutive ones as a run again: `Reception.carryOut`).
    func sendMessages(_ sends: [PendingSend], session key: UInt64) {
        for p in sends { commands.append(.send(p.request, id: p.id, key: key)) }
    }
    func channelTails(_ channels: [ChannelID], of user: UserID, gather gid: UInt64, session key: UInt64) {
        commands.append(.tails(channels, user: user, gather: gid, key: key))
    }
    func checkSubscriptions(_ r: GHSubscribe, gather gid: UInt64, session key: UInt64) {
        commands.append(.check(.subscribe(r), gather: gid, key: key))
    }
    func grantSubscriptions(_ r: GHSubscribe, gather gid: UInt64, session key: UInt64) {
        commands.append(.grant(.subscribe(r), gather: gid, key: key))
    }
    func releaseSubscriptions(user: UserID, kind: SubscriptionKind, _ targets: [SubscriptionTarget]) {
        commands.append(.release(user, kind: kind.rawValue, targets))
    }
    func acknowledged(session key: UInt64, ackedOrd: UInt64, packageAcked: Bool) {
        commands.append(.acknowledged(key: key, ackedOrd: ackedOrd, packageAcked: packageAcked))
    }
    func sessionEnded(_ key: UInt64, ackedOrd: UInt64, reconnecting: Bool) { commands.append(.ended(key, ackedOrd: ackedOrd, reconnecting: reconnecting)) }
    func received(session key: UInt64, _ upTo: [ChannelID: UInt64]) { commands.append(.received(key, upTo)) }
    func sessionDetached(_ key: UInt64, since: UInt64) { commands.append(.detached(key, since: since)) }
    func sessionResumed(_ key: UInt64) { commands.append(.resumed(key)) }
    func sessionBehind(_ key: UInt64, _ behind: Bool) { commands.append(.behind(key, behind)) }
    func webhookPost(_ d: WebhookDelivery, fromGateway _: Int) { commands.append(.webhookPost(d)) }

    func replay(_ channel: ChannelID, after: UInt64, before: UInt64, toGateway _: Int) {
        commands.append(.replay(channel, after: after, before: before))
    }
    func turnEnding() {}

    /// Sends what this turn gathered, with the gateway's draining outbound bytes when
    /// they moved by an eighth of the pause bound (or drained).
    func turnEnded(_ gateway: Gateway) {
        let outbound = gateway.outboundBounds.drainingBytes, applied = gateway.appliedBytes[homeIndex, default: 0]
        let step = min(256 * 1024, max(1024, gateway.settings.outboundPauseBytes / 8))
        if abs(outbound - reportedOutbound) >= step || applied &- reportedApplied >= step || (outbound == 0 && reportedOutbound != 0) {
            reportedOutbound = outbound
            reportedApplied = applied
            commands.append(.outbound(queued: outbound, applied: applied))
        }
        guard !commands.isEmpty else { return }
        sink(.fromGateway(index, commands))
        commands = []
    }
}
