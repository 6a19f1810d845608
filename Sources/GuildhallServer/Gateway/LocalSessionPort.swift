// A session on the home's own loop is its own port (SessionPort.swift): the
// home's calls reach it directly, and the gateway has its say on the way:
// which answers are the client's, the login's admission, reading paused by
// homes. Loop thread only.

import GuildhallCore
import GuildhallLoop
import GuildhallWire

extension Session: SessionPort {
    func admitted(user: UserID, device: DeviceID, sessionID: String) {
        gateway.limits.node.metrics.logins.increment()
        admissionAsked = nil
        guard isAwaitingLogin else { return }
        loggedIn(user, device: device, sessionID: sessionID)
        // The other homes hear of it before any request it sends next.
        gateway.routes.opened(self)
        liveness.loggedIn(at: gateway.loop.nowMillis)
        decoder.maxFrameBytes = gateway.settings.maxFrameBytes
        gateway.readingResumed(self, .admission)
    }

    func packageSent() { awaitingPackageSeq = eventSeq }

    func answerPart(_ id: UInt64, _ part: GatherPart) { gateway.routes.partArrived(id, part, for: self) }

    func typing(_ entry: GHChannelTypers) { gateway.frames.owe(typing: entry, to: self) }

    func presence(_ list: [GHPresence]) { gateway.frames.owe(presence: list, to: self) }

    func homePauses(_ reason: ReadPauses) { homePaused(reason, by: gateway.index) }

    func homeResumes(_ reason: ReadPauses) { homeResumed(reason, by: gateway.index) }

    func end(_ reason: GHCloseReason?, _ message: String) { gateway.close(self, reason, message) }

    /// The client's answer to request `id`, unless the gateway made the request
    /// itself (a subscription carried to a guild's new home: SubscriptionCarry.swift).
    func respond(_ id: UInt64, _ result: GHResponse.OneOf_Result) {
        if id >= GatewayRequests.firstCarriedID, gateway.requests.isCarried(id) { return gateway.requests.carriedAnswered(self, id, result) }
        queueAnswer(id, result)
    }

    /// An answer already encoded (a Frame payload), unless it answers a
    /// request the gateway made or a send it forwarded (ForwardedSends.swift).
    func respond(encoded payload: [UInt8]) {
        if gateway.requests.answersNeedSorting, !gateway.requests.isTheClients(payload, for: self) { return }
        queueAnswer(encoded: payload)
    }

    /// A send's answer, framed in the write buffer, unless the gateway sorts
    /// answers (then as `respond(encoded:)`, which reads the id back).
    func respond(answering id: UInt64, message: [UInt8]) {
        if gateway.requests.answersNeedSorting { return respond(encoded: MessageWire.answer(id: id, message: message)) }
        queueAnswer(to: id, message: message)
    }

    func fail(_ id: UInt64, _ failure: Failure) {
        gateway.limits.node.metrics.answered(failure.code)
        respond(id, .error(GHError(failure)))
    }

    /// Home `home` asks not to read the session for `reason`; several homes may, and each lifts only its own ask.
    func homePaused(_ reason: ReadPauses, by home: Int) {
        // A bit per loop here; homes on other nodes share the last bit (a resume from one may come early).
        gateway.pausingHomes[key, default: PausingHomes()][reason] |= 1 << UInt64(min(home, 63))
        pauseReading(reason)
    }

    func homeResumed(_ reason: ReadPauses, by home: Int) {
        guard var homes = gateway.pausingHomes[key] else { return }
        homes[reason] &= ~(1 << UInt64(min(home, 63)))
        gateway.pausingHomes[key] = homes.isEmpty ? nil : homes
        if homes[reason] == 0 { gateway.readingResumed(self, reason) }
    }
}
