// Presence in the SDK (docs/features.md "Presence"): choosing how one
// shows, saying a session is idle, and watching users. Watches are kept in
// the ledger and asked for again after a reconnect, like subscriptions.

import GuildhallWire

extension GuildhallClient.People {
    /// Chooses how this user shows to others (every session; kept across restarts); returns what others now see.
    @discardableResult
    public func setPresence(_ status: GHPresenceStatus, text: String = "") async throws -> GHPresence {
        var r = GHSetPresence()
        r.status = status
        r.customText = text
        let result = try await client.call(.setPresence(r))
        guard case .presence(let p) = result else { throw GuildhallError(code: .internal, message: "unexpected answer \(result)") }
        return p
    }

    /// Says whether this session is idle (the server also takes it as idle after presence-idle-seconds without requests).
    public func setIdle(_ idle: Bool) async throws {
        var r = GHSetIdle()
        r.idle = idle
        _ = try await client.call(.setIdle(r))
    }

    /// Watches (or stops watching) users' presence (USER_PRESENCE): their state now arrives at once, then each change.
    @discardableResult
    public func watchPresence(_ users: [String], _ operation: GHSubscribeOperation = .subscribe) async throws -> [GHTargetResult] {
        var r = GHSubscribe()
        r.type = .userPresence
        r.operation = operation
        r.targets = users.map { u in
            var t = GHSubscriptionTarget()
            t.userID = u
            return t
        }
        let result = try await client.call(.subscribe(r))
        guard case .subscribe(let answer) = result else { throw GuildhallError(code: .internal, message: "unexpected answer \(result)") }
        let ok = answer.results.filter { $0.status == .targetOk }.map(\.target.userID)
        client.state.withLock { $0.ledger.watch(operation, ok) }
        return answer.results
    }
}
