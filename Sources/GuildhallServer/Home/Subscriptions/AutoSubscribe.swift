// Auto-subscribe mode across homes (README "What clients receive"): one ladder per user,
// over all the user's channels whatever guild home holds them, kept at the
// user's home. Each guild home with an auto session of the user tells the
// user's home the user's channels there (with the user's last activity in
// each) when its auto mode starts or the channels change, and each moment
// of activity; the user's home runs the ladder and sends each guild home the
// levels of its channels, which it applies to the user's auto sessions there
// and tells them. On one loop all of this is calls. Loop thread only.

import GuildhallCore
import GuildhallWire

/// A user's channel at a guild home, as auto mode ranks it.
struct AutoChannel: Sendable {
    let id: ChannelID
    let activity: UInt64
}

/// At a user's home: the user's ladder and the channels each guild home reported.
struct AutoUser {
    var ladder: AutoLadder
    var channels: [Int: [AutoChannel]] = [:]
    var homeOf: [ChannelID: Int] = [:]
    var activity: [ChannelID: UInt64] = [:]
}

extension Subscriptions {
    // MARK: A guild's home

    /// Replaces the session's member subscriptions (not typing) with the automatic ones.
    func enableAutoMode(_ s: HomeSession) {
        s.autoSubscribe = true
        if let held = book.subscriptions(of: s.key) {
            for (kind, target) in held.all where kind != .channelTyping && !kind.isGuestKind { book.unsubscribe(s.key, kind, target) }
        }
        var entries: [GHSubscriptionEntry] = []
        for server in directory.serverIDs(of: s.user).sorted() {
            _ = book.subscribe(s.key, .serverNotifications, SubscriptionTarget(server: server), limit: .max)
            entries.append(Self.entry(.serverNotifications, SubscriptionTarget(server: server)))
        }
        if autoLevels[s.user] == nil {
            // The user's first auto session here: the user's home ranks this
            // home's channels with the rest. When it is this home, the levels
            // are back before the session is told anything, and it is told
            // once; from another loop they follow in a second change.
            autoLevels[s.user] = [:]
            s.autoSubscribe = false
            reportAutoChannels(s.user)
            s.autoSubscribe = true
            if services.place(user: s.user) != services.index {
                // Told once, with the levels, when they arrive.
                autoStarting[s.key] = entries
                return
            }
        }
        let now = now()
        for (channel, level) in (autoLevels[s.user] ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard let c = directory.channel(channel), directory.canView(s.user, c) else { continue }
            let t = SubscriptionTarget(server: c.serverID, channel: channel)
            _ = book.subscribe(s.key, level.kind, t, limit: .max)
            if level == .unreadStatus { s.sentUnreadStatus[channel] = services.unread(s.user, c, now: now).hasUnread }
            entries.append(Self.entry(level.kind, t))
        }
        tellSubscriptionChanges(entries, to: [s])
    }

    /// Tells the user's home the user's channels here, when the user has auto sessions here.
    func reassignAuto(_ user: UserID) {
        guard autoLevels[user] != nil else { return }
        reportAutoChannels(user)
    }

    private func reportAutoChannels(_ user: UserID) {
        var channels: [AutoChannel] = []
        for server in directory.serverIDs(of: user) {
            let joined = directory.member(user, of: server)?.joinedAt ?? 0
            for id in directory.channelIDs(of: server) {
                guard let c = directory.channel(id), directory.canView(user, c) else { continue }
                channels.append(AutoChannel(id: id, activity: max(positions.position(user, id).activity, joined, c.createdAt)))
            }
        }
        send(.autoChannels(user: user, channels), toHomeOf: user)
    }

    /// Records activity in a channel; in auto mode the user's home moves it up the ladder.
    func touchActivity(_ user: UserID, _ channel: ChannelID, now: UInt64, alreadyRecorded: Bool = false) {
        if !alreadyRecorded { positions.touch(user, channel, now: now) }
        // Every send touches its sender's: no hash of the user's id while nobody here is in auto mode.
        guard !autoLevels.isEmpty, autoLevels[user] != nil, directory.channel(channel) != nil else { return }
        send(.autoTouch(user: user, channel: channel, activity: positions.position(user, channel).activity), toHomeOf: user)
    }

    /// The user's home moved the user's channels here to these levels (nil: no longer covered).
    func applyAutoLevels(_ user: UserID, _ changes: [ChannelID: ChannelLevel?], uncovered: Int) {
        guard autoLevels[user] != nil else { return }
        let uncoveredChanged = autoUncovered.updateValue(uncovered, forKey: user) != uncovered
        let sessions = autoSessions(user)
        let now = now()
        var entries: [GHSubscriptionEntry] = []
        for (channel, level) in changes.sorted(by: { $0.key < $1.key }) {
            autoLevels[user]?[channel] = level
            guard let c = directory.channel(channel) else { continue }
            let t = SubscriptionTarget(server: c.serverID, channel: channel)
            for s in sessions {
                if let level {
                    _ = book.subscribe(s.key, level.kind, t, limit: .max)
                    if level == .unreadStatus { s.sentUnreadStatus[channel] = services.unread(user, c, now: now).hasUnread }
                } else if let held = book.subscriptions(of: s.key)?.channels[channel] {
                    book.unsubscribe(s.key, held.level.kind, t)
                }
            }
            entries.append(level.map { Self.entry($0.kind, t) } ?? Self.entry(nil, t))
        }
        var others: [HomeSession] = []
        for s in sessions {
            if let start = autoStarting.removeValue(forKey: s.key) {
                tellSubscriptionChanges(start + entries, to: [s], uncovered: uncovered, always: true)
            } else {
                others.append(s)
            }
        }
        tellSubscriptionChanges(entries, to: others, uncovered: uncovered, always: uncoveredChanged)
    }

    /// The user has no auto session here any more: forget what auto mode kept for them.
    func autoModeEnded(_ user: UserID) {
        for s in registry.sessions(of: user).values where !s.autoSubscribe { autoStarting.removeValue(forKey: s.key) }
        guard !hasAutoSessions(user) else { return }
        autoLevels.removeValue(forKey: user)
        autoUncovered.removeValue(forKey: user)
        ladders.removeValue(forKey: user)
    }

    // MARK: The user's home

    /// A guild home's channels of the user: the ladder is assigned again over all of them.
    func autoChannels(_ user: UserID, _ channels: [AutoChannel], from other: Int) {
        var u = ladders[user] ?? AutoUser(ladder: AutoLadder(limits: settings.subscriptionLimits))
        // A channel no longer reported leaves the ladder; its home stays known, so the removal reaches it.
        for c in u.channels[other] ?? [] where u.homeOf[c.id] == other { u.activity.removeValue(forKey: c.id) }
        u.channels[other] = channels
        var moved: [ChannelID] = []
        for c in channels {
            if let was = u.homeOf[c.id], was != other { moved.append(c.id) }
            u.homeOf[c.id] = other
            u.activity[c.id] = max(u.activity[c.id] ?? 0, c.activity)
        }
        var changes = u.ladder.assign(u.activity.map { (id: $0.key, activity: $0.value) })
        // A channel whose guild moved to this reporter (a cluster's shard
        // changed hands): its new home learns the level it kept.
        for id in moved where changes[id] == nil { changes[id] = u.ladder.levels[id] }
        ladders[user] = u
        sendLevels(user, changes, ensuring: other)
    }

    /// Activity of the user in one of its channels: it moves up the ladder.
    func autoTouch(_ user: UserID, _ channel: ChannelID, activity: UInt64) {
        guard var u = ladders[user], u.activity[channel] != nil else { return }
        u.activity[channel] = max(u.activity[channel] ?? 0, activity)
        let changes = u.ladder.touch(channel) { u.activity[$0] ?? 0 }
        ladders[user] = u
        sendLevels(user, changes, ensuring: nil)
    }

    /// Sends each guild home the changes of its channels (and `ensuring` an answer even without any).
    private func sendLevels(_ user: UserID, _ changes: [ChannelID: ChannelLevel?], ensuring reporter: Int?) {
        guard let u = ladders[user] else { return }
        var byHome: [Int: [ChannelID: ChannelLevel?]] = [:]
        if let reporter { byHome[reporter] = [:] }
        for (channel, level) in changes {
            guard let h = u.homeOf[channel] else { continue }
            byHome[h, default: [:]][channel] = level
        }
        for (h, part) in byHome.sorted(by: { $0.key < $1.key }) where !part.isEmpty || h == reporter {
            send(.autoLevels(user: user, part, uncovered: u.ladder.uncovered), to: h)
        }
    }

    // MARK: Between homes

    private func send(_ mail: HomeMail, toHomeOf user: UserID) { send(mail, to: services.place(user: user)) }

    private func send(_ mail: HomeMail, to other: Int) {
        if other == services.index { mailHere(mail) } else { services.links.post(.mail(services.index, [mail]), to: other) }
    }
}
