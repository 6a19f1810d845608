// Sends a gateway forwards to a guild's home on another node (docs/cluster.md).
// The gateway mints the message's UID, so the message is the same whoever
// stores it, and keeps each send until its answer comes. When the guild's
// shard changes hands meanwhile (its home died or left), the send goes to
// the new owner, with the same UID, marked as a retry: the new home, caught
// up from the shard's log before it serves, answers with the stored message
// when the old home had stored it, and stores it otherwise, so it is stored
// once. While no node serves the shard, the gateway tries again each sweep
// for up to 5 s, then answers 503. The retry travels under a request id of
// the gateway's (`firstCarriedID` and up): a late answer from the old home to
// the client's id is dropped, and the retry's answer goes to the client under
// its own id. Kept by `GatewayRequests` (SubscriptionCarry.swift). Gateway loop only.

import GuildhallCore
import GuildhallWire

struct ForwardedSend {
    struct Key: Hashable {
        let session: UInt64
        let id: UInt64
    }

    let request: SendRequest
    /// When its shard changed hands or no node served it (the 5 s to find a home start then).
    var orphanedAt: UInt64?
    /// The gateway's id for the retry in flight (answers to the client's id are then dropped).
    var retryID: UInt64?
}

extension GatewayRequests {
    static let orphanedSendMs: UInt64 = 5_000

    /// A send for a home on another node (or, `orphaned`, for a shard no node
    /// serves now, tried again each sweep for a while): its UID minted here, kept until answered.
    @discardableResult
    func forwarding(_ r: SendRequest, id: UInt64, from s: Session, orphaned: Bool = false) -> SendRequest {
        var r = r
        if r.uid == 0 { r.uid = mintUID(clock()) }
        forwardedSends[ForwardedSend.Key(session: s.key, id: id)] = ForwardedSend(request: r, orphanedAt: orphaned ? loop.nowMillis : nil)
        return r
    }

    /// An answer from a home for session `s`: false when it is not the client's to see (a superseded forward).
    func sendAnswered(_ s: Session, id: UInt64, _ payload: [UInt8]) -> Bool {
        if id >= Self.firstCarriedID {
            guard let (key, _) = forwardedSends.first(where: { $0.key.session == s.key && $0.value.retryID == id }) else { return true }
            forwardedSends.removeValue(forKey: key)
            guard var frame = try? GHFrame(serializedBytes: payload) else { return false }
            frame.response.id = key.id
            s.respond(encoded: (try? frame.serializedBytes()) ?? [])
            return false
        }
        let key = ForwardedSend.Key(session: s.key, id: id)
        guard let f = forwardedSends[key] else { return true }
        if f.retryID != nil { return false }
        forwardedSends.removeValue(forKey: key)
        return true
    }

    /// The shards changed hands: their unanswered sends look for the new owner.
    func orphanSends(ofShards shards: Set<Int>, _ session: (UInt64) -> Session?) {
        let now = loop.nowMillis
        for (key, f) in forwardedSends where f.orphanedAt == nil && shards.contains(ShardPlan.shard(guild: f.request.channelID, shards: self.shards)) {
            forwardedSends[key]?.orphanedAt = now
            forwardedSends[key]?.retryID = nil
        }
        resendOrphans(now: now, session)
    }

    /// Each sweep: orphaned sends go to their shard's owner if there is one
    /// now, or are answered 503 once 5 s passed; sends of sessions gone are forgotten.
    func resendOrphans(now: UInt64, _ session: (UInt64) -> Session?) {
        guard !forwardedSends.isEmpty else { return }
        for (key, f) in forwardedSends {
            guard let s = session(key.session), s.isLoggedIn else {
                forwardedSends.removeValue(forKey: key)
                continue
            }
            guard let orphanedAt = f.orphanedAt, f.retryID == nil else { continue }
            if let place = routes.sendPlace(f.request.channelID, for: s) {
                var r = f.request
                r.retried = true
                nextCarriedID += 1
                forwardedSends[key]?.retryID = nextCarriedID
                forwardedSends[key]?.orphanedAt = nil
                routes.send([PendingSend(request: r, id: nextCarriedID)], to: place, from: s)
            } else if now >= orphanedAt + Self.orphanedSendMs {
                forwardedSends.removeValue(forKey: key)
                s.fail(key.id, Failure(.unavailable, "no node serves that channel now; retry"))
            }
        }
    }
}
