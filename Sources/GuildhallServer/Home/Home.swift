// A home (docs/architecture.md, docs/cluster.md): one loop's share of the node's state.
// It owns the guilds and users `HomeMap` places on its loop: their
// directory entries, the interest index of who is online, read positions,
// receipts, typing, direct conversations, the inbox and sync cursors, and
// it validates, sequences and stores their messages. Gateways reach it
// through `Reception` (by calls on its own loop, by messages from others);
// it reaches their sessions through `SessionPort`s. It shares nothing with
// the other homes. Built on its loop's thread and touched only there
// (NodeLoop.swift runs the loop, Node.swift the process).

import Foundation
import GuildhallCore
import GuildhallLoop
import GuildhallStore
import GuildhallWire

final class Home: HomePart {
    /// A search page's size when the request names none.
    static let defaultSearchPage = 20
    /// What every part shares (HomeServices.swift), reached as every part reaches it (HomePart.swift).
    let services: HomeServices
    /// Which loop this home is on.
    var index: Int { services.index }
    var clock: @Sendable () -> UInt64 { services.clock }
    var loop: EventLoop { services.loop }
    /// The loop's own gateway: its sessions are ports without a message between.
    var gateway: Gateway! {
        get { services.gateway }
        set { services.gateway = newValue }
    }

    /// The sessions and the interest index of who is online; shared with the
    /// gateway, and held here too: fan-out reads it once per recipient, and
    /// reaching it through the gateway cost a retain and release each time.
    let registry: SessionRegistry
    var metrics: NodeMetrics { services.metrics }
    /// Typing in the loop's channels.
    private(set) var typing: ChannelTyping!
    /// Presence: of the users homed here, and as heard for the sessions here (Presences.swift).
    private(set) var presences: Presences!
    /// Member list pages and the windows sessions watch (MemberLists.swift).
    private(set) var memberLists: MemberLists!
    /// Invite codes: made, listed, revoked, looked up and joined by (InviteLinks.swift).
    private(set) var inviteLinks: InviteLinks!
    /// Timeouts, slow mode and bans with an end (Moderation.swift).
    private(set) var moderation: Moderation!
    /// Channels' pins (Pinboard.swift).
    private(set) var pinboard: Pinboard!
    /// The audit log's entries and pages (AuditTrail.swift).
    private(set) var auditTrail: AuditTrail!
    /// Profiles of the users homed here, their copies on members, nicknames (Profiles.swift).
    private(set) var profiles: Profiles!
    /// Devices' push tokens and the notices owed to users with no session online (PushNotices.swift).
    private(set) var pushNotices: PushNotices!
    private(set) var directPrivacy: DirectPrivacy!
    private(set) var webhooks: Webhooks!
    private(set) var offlineDelivery: OfflineDelivery!
    /// Subscribe requests and auto-subscribe mode.
    private(set) var subscriptions: Subscriptions!
    /// Requests on servers, members, channels, guests and bans.
    private(set) var directoryRequests: DirectoryRequests!
    /// Requests on roles and permission overrides (PermissionRequests.swift).
    private(set) var permissionRequests: PermissionRequests!
    /// Mark-read, unread queries and events, moved read positions.
    private(set) var reading: Reading!
    var deliveryMarks: UInt64 = 0
    /// Each committed send's ChannelMessage bytes, encoded over the last's (`MessageRecord.encode(into:)`).
    var committedMessageBytes: [UInt8] = []
    /// Group read receipts of the loop's channels.
    private(set) var groupReceipts: GroupReceipts!
    private(set) var messageOperations: MessageOperations!
    /// History, threads, messages by UID and search (MessageReads.swift).
    private(set) var messageReads: MessageReads!
    private(set) var attachments: Attachments!
    /// Per-user state: direct conversations, received status, offline sync and cursors.
    private(set) var userHome: UserHome!
    /// Received status per message and user (ReceivedStatus.swift).
    private(set) var receivedStatuses: ReceivedStatuses!
    var positionTimer: LoopTimer!
    /// What gateways tell the home, and sessions' lives (Reception.swift).
    private(set) var reception: Reception!
    /// Publishers not read while the fan-out drains (PublisherPause.swift).
    private(set) var publishers: PublisherPause!
    /// The home's half of the interest, and the feed of the gateways' halves.
    private(set) var interest: InterestFeed!
    /// The other loops (LoopLinks.swift).
    var links: LoopLinks { services.links }
    /// Which home owns what.
    var map: HomeMap { services.map }
    /// In a cluster: the generation of each shard's state this home loaded (JobShards).
    var shardGenerations: [Int: UInt64] = [:]

    /// Builds the home on its loop from its share of the store's snapshot.
    init(index: Int, loop: EventLoop, settings: Settings, log: ServerLog, clock: @escaping @Sendable () -> UInt64,
         store: Store, share snapshot: StoreSnapshot, links: LoopLinks, metrics: NodeMetrics) {
        services = HomeServices(index: index, settings: settings, log: log, clock: clock, loop: loop, links: links, metrics: metrics)
        registry = services.registry
        presences = Presences(services: services)
        memberLists = MemberLists(services: services, presences: presences)
        auditTrail = AuditTrail(services: services)
        pinboard = Pinboard(services: services, auditTrail: auditTrail) { [unowned self] m, user in self.shown(m, to: user) }
        profiles = Profiles(services: services, presences: presences)
        pushNotices = PushNotices(services: services, presences: presences, profiles: profiles)
        directPrivacy = DirectPrivacy(services: services)
        offlineDelivery = OfflineDelivery(services: services)
        reception = Reception(services: services, presences: presences, memberLists: memberLists, profiles: profiles, pushNotices: pushNotices,
                              offlineDelivery: offlineDelivery)
        publishers = PublisherPause(services: services, reception: reception)
        interest = InterestFeed(services: services)
        services.runner = EffectRunner(store: store, lane: index, map: map, registry: registry, log: log, clock: clock, settings: settings,
                              highestInboxOrd: snapshot.highestInboxOrd)
        groupReceipts = GroupReceipts(services: services)
        userHome = UserHome(services: services)
        attachments = Attachments(services: services, userHome: userHome, profiles: profiles)
        receivedStatuses = ReceivedStatuses(services: services, userHome: userHome)
        messageReads = MessageReads(services: services, userHome: userHome) { [unowned self] m, user in self.shown(m, to: user) }
        subscriptions = Subscriptions(services: services) { [unowned self] mail in self.received([mail], from: self.index) }
        directoryRequests = DirectoryRequests(services: services, attachments: attachments, auditTrail: auditTrail)
        inviteLinks = InviteLinks(services: services, requests: directoryRequests)
        moderation = Moderation(services: services, requests: directoryRequests, auditTrail: auditTrail)
        permissionRequests = PermissionRequests(services: services, requests: directoryRequests)
        webhooks = Webhooks(services: services, requests: directoryRequests, owing: reception.owing) { [unowned self] r, id, s in
            self.sendMessage(r, id: id, from: s)
        }
        reading = Reading(services: services, interest: interest, subscriptions: subscriptions, offlineDelivery: offlineDelivery)
        typing = ChannelTyping(services: services, moderation: moderation, userHome: userHome, reception: reception)
        presences.hear(userHome, reception, memberLists)
        profiles.use(attachments, directoryRequests)
        offlineDelivery.show(userHome, groupReceipts)
        messageOperations = MessageOperations(services: services, userHome: userHome, pinboard: pinboard, moderation: moderation,
                                              groupReceipts: groupReceipts, auditTrail: auditTrail) { [unowned self] in
            self.fanOut($0, encoded: $1, from: $2, mentionOrds: $3, update: true, unreadMoved: $4)
        }
        userHome.use(attachments, directPrivacy, messageOperations, typing, reading)
        reception.use(subscriptions, userHome, reading, publishers, webhooks, hands: HomeHands(
            route: { [unowned self] in self.route($0, id: $1, from: $2) },
            send: { [unowned self] in self.sendRun($0, from: $1) },
            replay: { [unowned self] in self.replay($0, after: $1, before: $2, to: $3) },
            turnEnding: { [unowned self] in self.turnEnding() }))
        // With one home its own tallies are each user's whole count; otherwise users' homes keep it.
        book.recordsTallies = settings.loops > 1 || !settings.cluster.isEmpty
        adopt(snapshot)
        if !settings.cluster.isEmpty {
            runner.logShards = { [unowned self] in self.logShards($0) }
            runner.userPlace = { [unowned self] in self.place(user: $0) }
        }

        runner.resumeReading = { [unowned self] s in s.resumeReading(.storage) { self.reception.releaseHeldSends(s) } }
        runner.applyChanges = { [unowned self] changes, ords in self.apply(changes, ords: ords) }
        runner.dropChange = { [unowned self] change in self.drop(change) }
        runner.followUp = { [unowned self] f, stored in self.followUp(f, stored: stored) }
        runner.tellAudience = { [unowned self] notice, copy in self.tellAudience(notice, copy) }
        runner.read = { [unowned self] what in Answers.read(what, at: self) }
        runner.attachmentLinks = { [unowned self] in AttachmentLinks(self.settings) }
        runner.committedOnLoop = { [metrics] in metrics.jobsCommittedOnLoop.increment(by: Int64($0)) }
        runner.commitFailed = { [metrics] in metrics.commitFailures.increment() }
        runner.post = { [links, index] home, mail in links.post(.mail(index, [mail]), to: home) }
        positionTimer = LoopTimer(loop: loop)
        let flushEvery = UInt64(settings.positionFlushMs)
        positionTimer.start(afterMillis: flushEvery, repeatMillis: flushEvery) { [unowned self] in
            self.reading.flushPositions()
            self.presences.tellHeld(now: self.loop.nowMillis)
            self.reception.followNodes()
            self.moderation.liftEndedBans()
            self.auditTrail.pruneIfDue()
            self.pushNotices.flush()
            self.directPrivacy.expire(now: self.now())
            self.reception.expireEndings(now: self.loop.nowMillis)
            // Its notices and writes leave now, not after the loop's next poll (Gateway's timers say why).
            self.services.gateway?.flushAll()
        }
    }

    func now() -> UInt64 { services.clock() }

    func newID(now: UInt64, shard: Int?) -> UInt64 { services.newID(now: now, shard: shard) }

    // MARK: Storage


    // MARK: Sessions and turns

    /// The gateway side of session `key`: the session itself on the home's
    /// own loop, else a port that sends commands to its loop.
    func port(for key: UInt64) -> (any SessionPort)? { services.port(for: key) }

    /// The loop's turn ends (before its gateway flushes): the gateways'
    /// interest changes, the turn's commits, coalesced receipt answers.
    func turnEnding() {
        subscriptions.reportTallies()
        interest.sync()
        presences.tellChanges()
        runner.submitTurnJobs(inline: true)
        groupReceipts.sendOwedResponses()
    }

    // MARK: Mail from other homes

    func received(_ mail: [HomeMail], from other: Int) {
        loop.assertOnLoop()
        for m in mail {
            switch m {
            case .file(let items, let token): runner.file(items, token: token, from: other)
            case .filed(let token): runner.filed(token)
            case .dress(let user, let items, let token): offlineDelivery.dress(items, for: user, token: token, from: other)
            case .dressed(let token, let events): offlineDelivery.dressed(token, events)
            case .autoChannels(let user, let channels): subscriptions.autoChannels(user, channels, from: other)
            case .autoTouch(let user, let channel, let activity): subscriptions.autoTouch(user, channel, activity: activity)
            case .autoLevels(let user, let changes, let uncovered): subscriptions.applyAutoLevels(user, changes, uncovered: uncovered)
            case .receivedRange(let user, let range, let except): reading.oweHere(received: range, of: user, except: except)
            case .subscriptionTallies(let changes): subscriptions.take(changes)
            case .presence(let list): presences.heard(list)
            case .presenceAsked(let users, let session): presences.asked(users, for: session, from: other)
            case .profiles(let list, let changed): profiles.heard(list, changed: changed)
            case .profilesAsked(let users): profiles.asked(users, from: other)
            case .directCheck(let token, let from, let to): directPrivacy.answer(token: token, from: from, to: to, asker: other)
            case .directChecked(let token, let verdicts): directPrivacy.heard(token: token, verdicts)
            case .directPrivacyChanged(let user): directPrivacy.forget(user)
            }
        }
    }

    // MARK: Shutdown


    /// Closes the home's timers (the last step of shutdown).
    func closeHandles() {
        positionTimer?.close()
        publishers?.close()
        attachments?.close()
    }

    /// Applies the live settings of `newer` on this loop.
    func applyLive(_ newer: Settings) {
        services.settings = settings.applyingLive(newer).0
        runner.storeQueueMax = settings.storeQueueMax
        runner.inlineCommitMax = settings.loopCommitMax
        typing.board.throttleMs = UInt64(settings.typingThrottleMs)
        typing.board.expiryMs = UInt64(settings.typingExpiryMs)
        directory.sizeMarks = settings.serverSizeMarks
    }
}
