// Subscriptions, unread, typing, guests and bans in the SDK, with parameter
// values shaped like the protocol's (type, operation, targets). The client keeps a
// ledger of what it subscribed and which servers it entered as a guest, and
// replays both after a reconnect, so an application subscribes once.

import GuildhallWire

/// Subscribe or unsubscribe servers (SERVER_MSG, GUEST_SERVER).
public struct SubscribeServerParam: Sendable {
    public var subscribeType: GHSubscriptionType
    public var operationType: GHSubscribeOperation
    public var targets: [UInt64]

    public init(subscribeType: GHSubscriptionType, operationType: GHSubscribeOperation = .subscribe, targets: [UInt64]) {
        self.subscribeType = subscribeType; self.operationType = operationType; self.targets = targets
    }
}

/// Subscribe or unsubscribe channels (CHANNEL_MSG, CHANNEL_UNREAD_COUNT, CHANNEL_UNREAD_STATUS, CHANNEL_TYPING, GUEST_CHANNEL).
public struct SubscribeChannelParam: Sendable {
    public var subscribeType: GHSubscriptionType
    public var operationType: GHSubscribeOperation
    public var targets: [ChannelTarget]

    public init(subscribeType: GHSubscriptionType, operationType: GHSubscribeOperation = .subscribe, targets: [ChannelTarget]) {
        self.subscribeType = subscribeType; self.operationType = operationType; self.targets = targets
    }
}

extension GuildhallClient.Subscriptions {
    public func subscribeServer(_ p: SubscribeServerParam) async throws -> [GHTargetResult] {
        try await subscribe(p.subscribeType, p.operationType, p.targets.map { ChannelTarget(serverID: $0, channelID: 0) })
    }

    public func subscribeChannel(_ p: SubscribeChannelParam) async throws -> [GHTargetResult] {
        try await subscribe(p.subscribeType, p.operationType, p.targets)
    }

    func subscribe(_ type: GHSubscriptionType, _ operation: GHSubscribeOperation, _ targets: [ChannelTarget]) async throws -> [GHTargetResult] {
        var r = GHSubscribe()
        r.type = type
        r.operation = operation
        r.targets = targets.map {
            var t = GHSubscriptionTarget()
            t.serverID = $0.serverID
            t.channelID = $0.channelID
            return t
        }
        let result = try await client.call(.subscribe(r))
        guard case .subscribe(let answer) = result else { throw GuildhallError(code: .internal, message: "unexpected answer \(result)") }
        let ok = answer.results.filter { $0.status == .targetOk }.map { ChannelTarget(serverID: $0.target.serverID, channelID: $0.target.channelID) }
        client.state.withLock { $0.ledger.record(type, operation, ok) }
        return answer.results
    }

    /// Switches between auto-subscribe and manual mode for this session (and later reconnects).
    public func setAutoSubscribe(_ on: Bool) async throws {
        var r = GHSetSubscribeMode()
        r.autoSubscribe = on
        _ = try await client.call(.setSubscribeMode(r))
        client.state.withLock { $0.autoSubscribe = on }
    }
}

extension GuildhallClient.Messages {
    /// Marks a channel read up to `seq` (0: everything); returns the new unread info.
    /// `time` instead of `seq`: everything sent at or before it (ms) is read.
    public func markRead(_ channel: UInt64, upTo seq: UInt64 = 0, time: UInt64 = 0) async throws -> GHUnreadInfo {
        var r = GHMarkRead()
        r.channelID = channel
        r.seq = seq
        r.time = time
        let result = try await client.call(.markRead(r))
        guard case .unread(let info) = result else { throw GuildhallError(code: .internal, message: "unexpected answer \(result)") }
        return info
    }

    /// Unread info for channels, in the order asked (unreadable ones left out).
    public func unread(_ channels: [UInt64]) async throws -> [GHUnreadInfo] {
        var r = GHGetUnread()
        r.channelIds = channels
        let result = try await client.call(.getUnread(r))
        guard case .unreads(let list) = result else { throw GuildhallError(code: .internal, message: "unexpected answer \(result)") }
        return list.unreads
    }

    /// Says "typing" in a channel; the server throttles and fans it out.
    public func sendTyping(_ channel: UInt64) async throws {
        var r = GHSendTyping()
        r.channelID = channel
        _ = try await client.call(.sendTyping(r))
    }
}

extension GuildhallClient.Directs {
    /// Says "typing" to the peer of a direct conversation; they hear it as a typing event of the conversation (server 0).
    public func sendTyping(to peer: String) async throws {
        var r = GHSendTyping()
        r.peerID = peer
        _ = try await client.call(.sendTyping(r))
    }
}

extension GuildhallClient.Servers {
    /// Enters a server as a guest; re-entered automatically after a reconnect.
    @discardableResult
    public func enterAsGuest(_ server: UInt64) async throws -> GHServerInfo {
        var r = GHEnterAsGuest()
        r.serverID = server
        let result = try await client.call(.enterAsGuest(r))
        guard case .server(let info) = result else { throw GuildhallError(code: .internal, message: "unexpected answer \(result)") }
        client.state.withLock { _ = $0.ledger.guestServers.insert(server) }
        return info
    }

    public func leaveAsGuest(_ server: UInt64) async throws {
        var r = GHLeaveAsGuest()
        r.serverID = server
        _ = try await client.call(.leaveAsGuest(r))
        client.state.withLock { $0.ledger.forgetGuest(server) }
    }
}

extension GuildhallClient.Members {
    /// `until`: when the ban ends by itself (ms since 1970; 0: until lifted). `reason`: for the server's audit log.
    public func ban(_ user: String, from server: UInt64, until: UInt64 = 0, reason: String = "") async throws {
        var r = GHBanMember()
        r.serverID = server
        r.userID = user
        r.until = until
        r.reason = reason
        _ = try await client.call(.banMember(r))
    }

    /// Times a member out until `until` (ms since 1970; 0 lifts it): they cannot send, react or type meanwhile.
    @discardableResult
    public func timeout(_ user: String, in server: UInt64, until: UInt64, reason: String = "") async throws -> GHMember {
        var r = GHTimeoutMember()
        r.serverID = server
        r.userID = user
        r.until = until
        r.reason = reason
        return try await client.expect(.timeoutMember(r)) { if case .member(let m) = $0 { m } else { nil } }
    }

    public func unban(_ user: String, from server: UInt64, reason: String = "") async throws {
        var r = GHUnbanMember()
        r.serverID = server
        r.userID = user
        r.reason = reason
        _ = try await client.call(.unbanMember(r))
    }
}

extension GuildhallClient {
    /// After a reconnect: enter guest servers again and repeat every subscription.
    func replayLedger() async {
        let ledger = state.withLock { $0.ledger }
        for request in ledger.requests() + ledger.presenceRequests() {
            if case .subscribe(let r) = request, r.type != .userPresence {
                _ = try? await subscriptions.subscribe(r.type, .subscribe, r.targets.map { ChannelTarget(serverID: $0.serverID, channelID: $0.channelID) })
            } else {
                _ = try? await call(request)
            }
        }
    }
}
